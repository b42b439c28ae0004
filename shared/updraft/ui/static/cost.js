// What a run cost, in dollars, on its page: Updraft's own routes (/api/updraft, through the session), not
// Airflow's. The run's total and its lines (the tries' measured usage; the scheduling overhead no try records,
// estimated), and the DAG's last 7 days. A live page redraws every few seconds: a run's cost is asked again only
// when the run changed, the DAG's days at most once a minute.

import { api, path } from "./api.js";
import { h, table } from "./view.js";

const DAYS = 7;
const DAYS_MS = 60_000;
const runs = new Map(); // run id -> { stamp, answer }: the run's cost while the run is unchanged
const dags = new Map(); // dag id -> { at, answer }

function updraft(...segments) {
  return "/ui/api/updraft/" + path(...segments);
}

/** Dollars to the cent, or to a millionth of a dollar below a cent (a run of short tasks costs that little). */
export function dollars(usd) {
  return usd >= 0.01 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(6)}`;
}

function runAnswer(dagId, run) {
  const stamp = `${dagId}|${run.state}|${run.end_date}`;
  const kept = runs.get(run.dag_run_id);
  if (kept && kept.stamp === stamp) return kept.answer;
  const answer = api(updraft("dags", dagId, "dagRuns", run.dag_run_id, "cost"));
  runs.set(run.dag_run_id, { stamp, answer });
  answer.catch(() => runs.delete(run.dag_run_id)); // asked again on the next redraw
  return answer;
}

function daysAnswer(dagId) {
  const kept = dags.get(dagId);
  if (kept && Date.now() - kept.at < DAYS_MS) return kept.answer;
  const answer = api(updraft("dags", dagId, "cost"), { query: { days: DAYS } });
  dags.set(dagId, { at: Date.now(), answer });
  answer.catch(() => dags.delete(dagId));
  return answer;
}

function lines(cost) {
  return table(["Service", "Quantity", "Dollars"], cost.lines.map((line) => h("tr", {},
    h("td", {}, line.name, line.estimated ? h("span", { class: "muted" }, " (estimated)") : ""),
    h("td", {}, `${Number(line.quantity.toPrecision(4))} ${line.unit}`), h("td", {}, dollars(line.usd)))),
  { class: "cost-lines" });
}

/** The run's cost box: drawn at once, filled when the answers come. */
export function runCost(dagId, run) {
  const total = h("p", { class: "muted" }, "…");
  const detail = h("div", {});
  const week = h("p", { class: "muted" });
  runAnswer(dagId, run).then((cost) => {
    total.className = "";
    total.replaceChildren(h("strong", { class: "cost-total" }, dollars(cost.usd)),
      h("span", { class: "muted" }, ` · tries ${dollars(cost.tries_usd)} · scheduling ${dollars(cost.overhead_usd)}`
        + ` (estimated) · ${cost.region}'s prices of ${cost.prices_date}`
        + (cost.unmetered_tries ? ` · ${cost.unmetered_tries} tries not metered` : "")));
    detail.replaceChildren(h("details", {}, h("summary", {}, "By service"), lines(cost)));
  }, (error) => total.replaceChildren(error.status === 404 ? "Not available from this API." : String(error.message)));
  daysAnswer(dagId).then((days) => {
    const ran = days.days.filter((d) => d.runs).map((d) => `${d.date.slice(5)}: ${d.runs} runs ${dollars(d.usd)}`);
    week.replaceChildren(`This DAG, last ${DAYS} days: ${dollars(days.usd)}`, ran.length ? ` (${ran.join(", ")})` : "");
  }, () => week.replaceChildren());
  return h("section", { class: "cost", "aria-label": "Cost" }, h("h3", {}, "Cost"), total, detail, week);
}
