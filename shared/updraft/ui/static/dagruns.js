// The DAG's Runs tab (/dags/{dag_id}/runs): the latest runs' durations as bars, and the runs as a table filtered by
// state and run type, 50 a page (Airflow's list: one request a page whatever the run count), newest first; the
// filters and the page are kept in the URL so the view can be shared.

import { api, link, path } from "./api.js";
import { durationBars } from "./charts.js";
import { badge, duration, h, navLink, table, time } from "./view.js";
import { dagTabPage } from "./dagtabs.js";

const PAGE = 50;
const RUN_STATES = ["queued", "running", "success", "failed"];
const RUN_TYPES = ["manual", "scheduled", "backfill", "asset_triggered"];

/** The runs as a table: id (to the run), state, type, dates, duration, and a link to its Gantt. */
export function runsTable(runs, { withDag = false } = {}) {
  return h("div", { class: "scroll" }, table([withDag ? "DAG" : null, "Run", "State", "Run type", "Run after",
    "Started", "Ended", "Duration", "Note", ""].filter((x) => x !== null), runs.map((r) => h("tr",
    { "data-run-id": r.dag_run_id }, [withDag ? navLink(link("dags", r.dag_id), r.dag_id) : null,
    navLink(link("dags", r.dag_id, "runs", r.dag_run_id), r.dag_run_id), badge(r.state), r.run_type,
    time(r.run_after), time(r.start_date), time(r.end_date), duration(r.duration), r.note || "",
    navLink(link("dags", r.dag_id, "runs", r.dag_run_id, "gantt"), "Gantt")].filter((x) => x !== null)
    .map((cell) => h("td", {}, cell)))), { class: "list" }));
}

/** A <select> of ``choices`` (plus "all") bound to the URL's ``name`` parameter. */
export function urlSelect(name, label, choices, onchange) {
  const params = new URLSearchParams(location.search);
  return h("label", { class: "filter" }, `${label} `, h("select", { name, onchange: (event) => {
    const next = new URLSearchParams(location.search);
    if (event.target.value) next.set(name, event.target.value);
    else next.delete(name);
    next.delete("offset");
    history.replaceState(null, "", `${location.pathname}${next.size ? `?${next}` : ""}`);
    onchange();
  } }, h("option", { value: "" }, "All"), choices.map((c) => h("option", { value: c,
    selected: params.get(name) === c }, c.replace(/_/g, " ")))));
}

/** Previous / next buttons over ``total`` items at the URL's ``offset``. */
export function pager(total, onchange) {
  const offset = Number(new URLSearchParams(location.search).get("offset")) || 0;
  const go = (to) => () => {
    const next = new URLSearchParams(location.search);
    if (to) next.set("offset", String(to));
    else next.delete("offset");
    history.replaceState(null, "", `${location.pathname}${next.size ? `?${next}` : ""}`);
    onchange();
  };
  return h("div", { class: "pager" },
    h("button", { type: "button", disabled: offset === 0, onclick: go(Math.max(0, offset - PAGE)) }, "Previous"),
    h("span", { class: "muted" }, total ? `${offset + 1}–${Math.min(total, offset + PAGE)} of ${total}` : "0"),
    h("button", { type: "button", disabled: offset + PAGE >= total, onclick: go(offset + PAGE) }, "Next"));
}

export function pageQuery() {
  const params = new URLSearchParams(location.search);
  return { limit: PAGE, offset: Number(params.get("offset")) || 0 };
}

// The calendar links a day here (?day=YYYY-MM-DD): the runs due that day (UTC).
function dayBounds(day) {
  return /^\d{4}-\d{2}-\d{2}$/.test(day || "")
    ? { run_after_gte: `${day}T00:00:00Z`, run_after_lte: `${day}T23:59:59.999999Z` } : {};
}

export const runsTab = dagTabPage("runs", async (box, dagId) => {
  const chart = h("div", { class: "chart-box" });
  const list = h("div", {});
  async function draw() {
    const params = new URLSearchParams(location.search);
    const [latest, page] = await Promise.all([
      api(path("dags", dagId, "dagRuns"), { query: { limit: PAGE, order_by: "-run_after" } }),
      api(path("dags", dagId, "dagRuns"), { query: { ...pageQuery(), order_by: "-run_after",
        state: params.get("state"), run_type: params.get("run_type"), ...dayBounds(params.get("day")) } })]);
    const runs = latest.dag_runs.slice().reverse();
    chart.replaceChildren(runs.length ? durationBars(runs.map((r) => ({ label: r.dag_run_id, seconds: r.duration,
      state: r.state, href: link("dags", dagId, "runs", r.dag_run_id) })),
    { title: `Durations of the last ${runs.length} runs` }) : "");
    list.replaceChildren(page.dag_runs.length ? runsTable(page.dag_runs) : h("p", { class: "muted" }, "No runs."),
      pager(page.total_entries, draw));
  }
  const day = dayBounds(new URLSearchParams(location.search).get("day")).run_after_gte?.slice(0, 10);
  box.replaceChildren(h("h2", {}, "Run durations"), chart,
    day ? h("p", {}, `Runs due on ${day} (UTC) · `, navLink(link("dags", dagId, "runs"), "All runs")) : "",
    h("div", { class: "filters" }, urlSelect("state", "State", RUN_STATES, draw),
      urlSelect("run_type", "Run type", RUN_TYPES, draw)), list);
  await draw();
  return { refresh: draw, live: () => true };
});
