// The home dashboard (/, Airflow's Home): health, DAG counts, the runs and task instances of a recent window by
// state, pool slots, and the latest asset events. A constant number of requests whatever the run count: one each
// (monitor/health, dags for the counts, importErrors, ui/dashboard/historical_metrics_data, pools, assets/events).

import { api, link } from "./api.js";
import { errorBox, h, navLink, stateCell, stateLabel, table, time } from "./view.js";
import { colour } from "./charts.js";

const WINDOWS = [["1h", 3600], ["24h", 86400], ["7d", 7 * 86400], ["30d", 30 * 86400]];

/** One bar split by state: each segment's width its share (no inline style: widths through the CSSOM). */
function stackedBar(label, counts, names = {}) {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  const named = (state) => names[state] || stateLabel(state === "no_status" ? null : state);
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  return h("div", { class: "stack", "aria-label": label },
    h("div", { class: "stack-bar" }, entries.map(([state, n]) => h("span", { class: `seg state-${state}`,
      title: `${named(state)}: ${n}`,
      style: { width: `${(100 * n) / total}%`, background: colour(state === "no_status" ? null : state) } }))),
    h("ul", { class: "stack-legend" }, entries.length ? entries.map(([state, n]) => h("li", {},
      stateCell(state === "no_status" ? null : state, { attrs: { "aria-hidden": "true" } }),
      ` ${named(state)} `, h("strong", {}, String(n))))
      : h("li", { class: "muted" }, "None in this window.")));
}

function healthCard(health) {
  return h("section", { class: "card", "aria-label": "Health" }, h("h2", {}, "Health"),
    h("ul", { class: "health" }, Object.entries(health).map(([name, part]) => h("li", {},
      h("span", { class: `health-dot ${part.status || "unknown"}`, "aria-hidden": "true" }),
      `${name.replace(/_/g, " ")}: `, h("strong", {}, part.status || "not used"),
      Object.entries(part).filter(([key]) => key.startsWith("latest")).map(([, value]) =>
        value ? [" · ", time(value)] : "")))));
}

export async function homePage(main) {
  const params = new URLSearchParams(location.search);
  let window_ = WINDOWS.find(([name]) => name === params.get("window")) || WINDOWS[1];
  const body = h("div", { class: "dashboard" }, h("p", { class: "muted loading" }, "Loading…"));
  const picker = h("div", { class: "tabs small", role: "group", "aria-label": "Window" });

  async function draw() {
    const start = new Date(Date.now() - window_[1] * 1000).toISOString();
    picker.replaceChildren(...WINDOWS.map((w) => h("button", { type: "button", "aria-pressed": String(w === window_),
      onclick: () => {
        window_ = w;
        history.replaceState(null, "", `${location.pathname}?window=${w[0]}`);
        draw();
      } }, w[0])));
    const [health, dags, active, failing, errors, metrics, pools, events] = await Promise.all([
      api("monitor/health"), api("dags", { query: { limit: 1 } }), api("dags", { query: { limit: 1, paused: false } }),
      api("dags", { query: { limit: 1, last_dag_run_state: "failed" } }), api("importErrors", { query: { limit: 1 } }),
      api("ui/dashboard/historical_metrics_data", { query: { start_date: start } }), api("pools", { query: { limit: 100 } }),
      api("assets/events", { query: { limit: 10, order_by: "-timestamp" } })]);
    const stat = (label, n, href) => navLink(href, h("span", { class: "stat" }, h("strong", {}, String(n)), label));
    body.replaceChildren(
      h("div", { class: "stats" }, stat("DAGs", dags.total_entries, link("dags")),
        stat("active", active.total_entries, link("dags") + "?paused=false"),
        stat("last run failed", failing.total_entries, link("dags") + "?last_dag_run_state=failed"),
        stat("import errors", errors.total_entries, link("dags"))),
      h("div", { class: "cards" },
        healthCard(health),
        h("section", { class: "card", "aria-label": "History" }, h("h2", {}, `Last ${window_[0]}`), picker,
          h("h3", {}, "Runs"), stackedBar("Runs by state", metrics.dag_run_states),
          h("h3", {}, "Task instances"), stackedBar("Task instances by state", metrics.task_instance_states)),
        h("section", { class: "card", "aria-label": "Pool slots" }, h("h2", {}, "Pool slots"),
          pools.pools.map((p) => h("div", { class: "pool" }, navLink(link("pools"), p.name), " ",
            stackedBar(`${p.name} slots`, { running: p.running_slots, queued: p.queued_slots,
              deferred: p.deferred_slots || 0, none: p.open_slots < 0 ? 0 : p.open_slots }, { none: "open" }),
            p.slots < 0 ? h("span", { class: "muted" }, "unlimited") : null))),
        h("section", { class: "card", "aria-label": "Asset events" }, h("h2", {}, "Latest asset events"),
          events.asset_events.length ? table(["Asset", "Source", "When"], events.asset_events.map((e) => h("tr", {},
            h("td", {}, navLink(link("assets", String(e.asset_id)), e.name || e.uri)),
            h("td", {}, e.source_dag_id ? navLink(link("dags", e.source_dag_id, "runs", e.source_run_id),
              `${e.source_dag_id}.${e.source_task_id}`) : "API"),
            h("td", {}, time(e.timestamp)))), { class: "list" }) : h("p", { class: "muted" }, "No asset events."))));
  }

  main.replaceChildren(h("h1", {}, "Home"), body);
  try {
    await draw();
  } catch (error) {
    body.replaceChildren(errorBox(error));
  }
  return { refresh: draw, live: () => true };
}
