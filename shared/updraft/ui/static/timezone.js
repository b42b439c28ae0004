// The display timezone, as Airflow 3's header sets it: the browser's own ("local", the default) until the user
// picks UTC or any IANA zone; the choice is kept in this browser (localStorage). Every time the UI shows goes
// through view.js's time(), which follows it, and the date fields of the trigger and backfill forms are typed in it.

const KEY = "updraft.timezone";
export const LOCAL = "local";

/** The browser's own zone's IANA name (what "local" stands for). */
export const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Every zone the user can pick: local, UTC, then the browser's IANA zones. */
export function zones() {
  const known = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return [LOCAL, "UTC", ...known.filter((zone) => zone !== "UTC")];
}

function valid(zone) {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The chosen zone: "local" or an IANA name (a stored name the browser does not know counts as local). */
export function chosenZone() {
  const stored = localStorage.getItem(KEY);
  return stored && stored !== LOCAL && valid(stored) ? stored : LOCAL;
}

export function chooseZone(zone) {
  if (zone === LOCAL) localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, zone);
}

/** The IANA name times are shown in. */
export function displayZone() {
  const zone = chosenZone();
  return zone === LOCAL ? browserZone : zone;
}

/** How a zone is named in the UI: "Local (Europe/Paris)", "UTC", "Asia/Tokyo". */
export function zoneName(zone) {
  return zone === LOCAL ? `Local (${browserZone})` : zone;
}

const formats = new Map();

/** A date and time in the display zone (the formatter is made once per zone). */
export function formatInZone(date) {
  const zone = displayZone();
  if (!formats.has(zone)) {
    formats.set(zone, new Intl.DateTimeFormat(undefined, { year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", timeZone: zone }));
  }
  return formats.get(zone).format(date);
}

const wallFormat = (zone) => new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric",
  month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });

/** A date as a datetime-local field's value ("YYYY-MM-DDTHH:mm:ss") on the display zone's clock. */
export function wallTime(date) {
  const parts = Object.fromEntries(wallFormat(displayZone()).formatToParts(date).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

/** The instant a datetime-local field's value names on the display zone's clock (the zone's offset then, found
 * by reading the guess back until it names that time: twice covers a change of offset in between). */
export function fromWallTime(value) {
  const [date, clock = "00:00:00"] = value.split("T");
  const asUtc = Date.parse(`${date}T${clock.length === 5 ? `${clock}:00` : clock}Z`);
  let instant = asUtc;
  for (let i = 0; i < 2; i += 1) instant = asUtc - (Date.parse(`${wallTime(new Date(instant))}Z`) - instant);
  return new Date(instant);
}
