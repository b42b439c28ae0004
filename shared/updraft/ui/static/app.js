// The app: reads the page's path (Airflow 3's UI paths), draws that page, follows in-app links without a
// reload, and refreshes a live page every few seconds, only while the tab is visible (no cost when nobody looks).

import { allAdmins, link, root, session, signOut, user } from "./api.js";
import { h } from "./view.js";
import { dagsPage } from "./dags.js";
import { dagPage } from "./dag.js";
import { taskPage } from "./task.js";
import { eventsPage, poolsPage, variablesPage } from "./admin.js";
import { connectionsPage } from "./connections.js";
import { loginPage } from "./login.js";
import { lazy } from "./lazy.js";
import { listen, MAC, withShortcut } from "./shortcuts.js";
import { chooseZone, chosenZone, displayZone, formatInZone, zoneName, zones } from "./timezone.js";

const POLL_MS = 3000;

// Path patterns to pages; each page is async (main, params) => ({ refresh, live }) or nothing.
const ROUTES = [
  [/^$/, () => lazy("./home.js", "homePage")],
  [/^dags$/, () => dagsPage],
  [/^dags\/([^/]+)$/, () => dagPage],
  [/^dags\/([^/]+)\/runs$/, () => lazy("./dagruns.js", "runsTab")],
  [/^dags\/([^/]+)\/tasks$/, () => lazy("./dagtasks.js", "tasksTab")],
  [/^dags\/([^/]+)\/calendar$/, () => lazy("./calendar.js", "calendarTab")],
  [/^dags\/([^/]+)\/backfills$/, () => lazy("./backfills.js", "backfillsTab")],
  [/^dags\/([^/]+)\/events$/, () => lazy("./dagtabs.js", "auditTab")],
  [/^dags\/([^/]+)\/code$/, () => lazy("./dagcode.js", "codeTab")],
  [/^dags\/([^/]+)\/details$/, () => lazy("./dagdetails.js", "detailsTab")],
  [/^dags\/([^/]+)\/required_actions$/, () => lazy("./hitl.js", "dagRequiredActions")],
  [/^dags\/([^/]+)\/runs\/([^/]+)\/required_actions$/, () => lazy("./hitl.js", "runRequiredActions")],
  [/^dags\/([^/]+)\/tasks\/([^/]+)$/, () => lazy("./dagtask.js", "dagTaskPage")],
  [/^dags\/([^/]+)\/tasks\/group\/([^/]+)$/, () => lazy("./taskgroup.js", "dagGroupPage")],
  [/^dags\/([^/]+)\/runs\/([^/]+)\/tasks\/group\/([^/]+)$/, () => lazy("./taskgroup.js", "runGroupPage")],
  [/^dags\/([^/]+)\/runs\/([^/]+)\/gantt$/, () => lazy("./gantt.js", "ganttPage")],
  [/^dags\/([^/]+)\/runs\/([^/]+)$/, () => dagPage],
  [/^dags\/([^/]+)\/runs\/([^/]+)\/tasks\/([^/]+)$/, () => taskPage],
  [/^dags\/([^/]+)\/runs\/([^/]+)\/tasks\/([^/]+)\/mapped$/, () => taskPage],
  [/^dags\/([^/]+)\/runs\/([^/]+)\/tasks\/([^/]+)\/mapped\/(-?\d+)$/, () => taskPage],
  [/^dags\/([^/]+)\/runs\/([^/]+)\/tasks\/([^/]+)\/(?:required_actions|xcom|rendered_templates)$/, () => taskPage],
  [/^dags\/([^/]+)\/runs\/([^/]+)\/tasks\/([^/]+)\/mapped\/(-?\d+)\/(?:required_actions|xcom|rendered_templates)$/,
    () => taskPage],
  [/^pools$/, () => poolsPage],
  [/^variables$/, () => variablesPage],
  [/^connections$/, () => connectionsPage],
  [/^events$/, () => eventsPage],
  [/^dag_runs$/, () => lazy("./browse.js", "dagRunsBrowse")],
  [/^task_instances$/, () => lazy("./browse.js", "taskInstancesBrowse")],
  [/^xcoms$/, () => lazy("./browse.js", "xcomsBrowse")],
  [/^required_actions$/, () => lazy("./hitl.js", "requiredActionsPage")],
  [/^assets$/, () => lazy("./assets.js", "assetsPage")],
  [/^assets\/(\d+)$/, () => lazy("./assets.js", "assetPage")],
  [/^providers$/, () => lazy("./providers.js", "providersPage")],
  [/^plugins$/, () => lazy("./system.js", "pluginsPage")],
  [/^configs$/, () => lazy("./system.js", "configPage")],
  [/^jobs$/, () => lazy("./system.js", "jobsPage")],
  [/^auth\/login$/, () => loginPage],
];

// The shell's links are relative to the page it was served for; in-app navigation changes the page's URL, so
// pin them to absolute paths first.
for (const el of document.querySelectorAll("a[href], link[rel=icon]")) {
  el.setAttribute("href", new URL(el.getAttribute("href"), location.href).pathname);
}

let current = null; // the drawn page's { refresh, live }
let generation = 0; // bumped on navigation: a slow refresh of the page left behind draws nothing

function route() {
  const rel = location.pathname.startsWith(root) ? location.pathname.slice(root.length) : "";
  for (const [pattern, page] of ROUTES) {
    const match = rel.match(pattern);
    if (match) return [page(), match.slice(1).map(decodeURIComponent)];
  }
  return [null, []];
}

function showUser() {
  const who = document.getElementById("who");
  const me = user();
  who.replaceChildren(me ? h("span", {}, `${me.username} (${me.role || "no role"}) `, allAdmins() ? null
    : h("button", { type: "button", class: "link", onclick: async () => { await signOut(); navigate(link("auth/login")); } },
      "Sign out")) : "");
}

// The theme: the system's (prefers-color-scheme) until the user picks light or dark with the header's button;
// the choice is kept in this browser (localStorage) and set on <html data-theme> before the page draws.
const THEME_KEY = "updraft.theme";
const THEMES = ["system", "light", "dark"];
const themeButton = document.getElementById("theme");

function showTheme() {
  const chosen = localStorage.getItem(THEME_KEY);
  const theme = THEMES.includes(chosen) ? chosen : "system";
  if (theme === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.dataset.theme = theme;
  const dark = theme === "dark" || (theme === "system" && matchMedia("(prefers-color-scheme: dark)").matches);
  themeButton.textContent = theme === "system" ? "◐" : dark ? "☾" : "☀";
  themeButton.setAttribute("aria-label", theme === "system" ? `Theme: follows the system (${dark ? "dark" : "light"})`
    : `Theme: ${theme}`);
  themeButton.title = `${themeButton.getAttribute("aria-label")}; click to change`;
}
themeButton.addEventListener("click", () => {
  // From the system's look, the first click goes to the other one; then light, dark, back to the system's.
  const chosen = localStorage.getItem(THEME_KEY) || "system";
  const systemDark = matchMedia("(prefers-color-scheme: dark)").matches;
  const next = chosen === "system" ? (systemDark ? "light" : "dark") : chosen === "light" ? "dark" : "system";
  if (next === "system") localStorage.removeItem(THEME_KEY);
  else localStorage.setItem(THEME_KEY, next);
  showTheme();
});
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", showTheme);
showTheme();

// The display timezone (Airflow 3's header choice): the summary names it, the menu's select changes it and the
// page is drawn again in it; the menu says what time it is there.
const zoneSummary = document.getElementById("timezone");
const zoneSelect = document.getElementById("timezone-select");
const zoneNow = document.getElementById("timezone-now");

function showZone() {
  const zone = chosenZone();
  zoneSummary.textContent = zone === "local" ? "Local time" : zone;
  zoneSummary.setAttribute("aria-label", `Timezone: ${zoneName(zone)}`);
  zoneSummary.title = `Times are shown in ${zoneName(zone)}`;
  zoneNow.textContent = `Current time in ${displayZone()}: ${formatInZone(new Date())}`;
}
zoneSelect.append(...zones().map((zone) => h("option", { value: zone, selected: zone === chosenZone() },
  zoneName(zone))));
zoneSelect.addEventListener("change", () => {
  chooseZone(zoneSelect.value);
  showZone();
  zoneSelect.closest("details").open = false;
  render();
});
zoneSummary.parentElement.addEventListener("toggle", showZone);
showZone();

/** The in-app 404 page: the path asked for, and the way back. */
function notFound(main) {
  main.replaceChildren(h("section", { class: "not-found" }, h("h1", {}, "Page not found"),
    h("p", {}, "Updraft has no page at ", h("code", {}, location.pathname), "."),
    h("p", {}, h("a", { href: link("dags"), "data-nav": true }, "Back to the DAGs"))));
}

async function render() {
  const mine = ++generation;
  current = null; // the page left behind refreshes no more
  const [page, params] = route();
  // Each page draws into its own box: a slow page left behind (back twice quickly) draws into a detached box,
  // never over the page now shown.
  // Until the page draws, it says it is loading (a page replaces the box's children when it has something).
  const main = h("div", { class: "page" }, h("p", { class: "loading", role: "status" }, "Loading…"));
  document.getElementById("main").replaceChildren(main);
  const signedIn = (await session()).username;
  if (mine !== generation) return;
  if (page !== loginPage && !signedIn) {
    location.replace(link("auth/login") + "?next=" + encodeURIComponent(location.pathname + location.search));
    return;
  }
  if (page === loginPage && signedIn) { // all-admins mode (or a session already open): no sign-in to show
    const next = new URLSearchParams(location.search).get("next");
    history.replaceState(null, "", next && next.startsWith(root) ? next : link("dags"));
    render();
    return;
  }
  showUser();
  if (!page) {
    notFound(main);
    current = null;
    return;
  }
  const drawn = await page(main, params, { navigate });
  if (mine === generation) current = drawn || null;
}

export function navigate(href) {
  history.pushState(null, "", href);
  window.scrollTo(0, 0);
  render();
}

// The header's Browse and Admin menus (<details>): one open at a time, closed by a click anywhere else, by Escape,
// and once one of their links is followed.
const menus = [...document.querySelectorAll("details.menu")];
for (const menu of menus) {
  menu.addEventListener("toggle", () => {
    if (menu.open) for (const other of menus) if (other !== menu) other.open = false;
  });
}
function closeMenus(except) {
  for (const menu of menus) if (menu !== except) menu.open = false;
}
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") closeMenus(null);
});

// Search DAGs: the header's button, and Ctrl+K (⌘K on a Mac) from anywhere, as Airflow 3's; the search's module is
// fetched when first opened. The page's other shortcuts are declared where they are drawn ("?" lists them).
const searchButton = document.getElementById("search");
if (MAC) searchButton.querySelector("kbd").textContent = "⌘K";
searchButton.addEventListener("click", async () => (await import("./search.js")).searchDags(navigate));
withShortcut(searchButton, { keys: "mod+k", category: "search", description: "Search Dags", inFields: true });
listen();

document.addEventListener("click", (event) => {
  closeMenus(event.target.closest("details.menu") && !event.target.closest("a") ? event.target.closest("details.menu")
    : null);
  const anchor = event.target.closest("a[data-nav]");
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) {
    return;
  }
  event.preventDefault();
  navigate(anchor.getAttribute("href")); // an SVG link's .href is no string
});
window.addEventListener("popstate", render);

let polling = false;
async function poll() {
  if (polling || document.visibilityState !== "visible" || !current || !current.live()) return;
  polling = true;
  const mine = generation;
  try {
    await current.refresh(() => mine !== generation);
  } catch (error) {
    console.warn("refresh failed", error);
  } finally {
    polling = false;
  }
}
setInterval(poll, POLL_MS);
document.addEventListener("visibilitychange", poll); // back in view: catch up at once

render();
