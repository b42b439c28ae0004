// Airflow's Browse lists across every DAG: /dag_runs, /task_instances and /xcoms, 50 a page through the REST
// routes' ``~`` wildcards (one request a page), newest first, with the state filter kept in the URL.

import { api, link, path } from "./api.js";
import { pageQuery, pager, runsTable, urlSelect } from "./dagruns.js";
import { badge, duration, errorBox, h, json, navLink, table, time } from "./view.js";

const RUN_STATES = ["queued", "running", "success", "failed"];
const TI_STATES = ["scheduled", "queued", "running", "success", "failed", "up_for_retry", "up_for_reschedule",
  "upstream_failed", "skipped", "deferred", "removed", "restarting", "no_status"];

function listPage(title, load, filters = []) {
  return async (main) => {
    const list = h("div", {}, h("p", { class: "muted loading" }, "Loading…"));
    async function draw() {
      try {
        list.replaceChildren(...await load(draw));
      } catch (error) {
        list.replaceChildren(errorBox(error));
      }
    }
    main.replaceChildren(h("h1", {}, title),
      filters.length ? h("div", { class: "filters" }, filters.map((make) => make(draw))) : "", list);
    await draw();
    return { refresh: draw, live: () => true };
  };
}

const state = () => new URLSearchParams(location.search).get("state");

export const dagRunsBrowse = listPage("DAG Runs", async (draw) => {
  const page = await api(path("dags", "~", "dagRuns"), { query: { ...pageQuery(), order_by: "-run_after",
    state: state() } });
  return [page.dag_runs.length ? runsTable(page.dag_runs, { withDag: true }) : h("p", { class: "muted" }, "No runs."),
    pager(page.total_entries, draw)];
}, [(draw) => urlSelect("state", "State", RUN_STATES, draw)]);

function tiHref(ti) {
  return link("dags", ti.dag_id, "runs", ti.dag_run_id, "tasks", ti.task_id,
    ...(ti.map_index >= 0 ? ["mapped", String(ti.map_index)] : []));
}

export const taskInstancesBrowse = listPage("Task Instances", async (draw) => {
  const page = await api(path("dags", "~", "dagRuns", "~", "taskInstances"), { query: { ...pageQuery(),
    order_by: "-run_after", state: state() } });
  return [page.task_instances.length ? h("div", { class: "scroll" }, table(["DAG", "Run", "Task", "Map index",
    "State", "Try", "Started", "Duration", "Pool"], page.task_instances.map((ti) => h("tr", {}, [
    navLink(link("dags", ti.dag_id), ti.dag_id), navLink(link("dags", ti.dag_id, "runs", ti.dag_run_id), ti.dag_run_id),
    navLink(tiHref(ti), ti.task_display_name || ti.task_id), ti.map_index >= 0 ? String(ti.map_index) : "",
    badge(ti.state), String(ti.try_number), time(ti.start_date), duration(ti.duration), ti.pool]
    .map((cell) => h("td", {}, cell)))), { class: "list" })) : h("p", { class: "muted" }, "No task instances."),
  pager(page.total_entries, draw)];
}, [(draw) => urlSelect("state", "State", TI_STATES, draw)]);

export const xcomsBrowse = listPage("XComs", async (draw) => {
  const page = await api(path("dags", "~", "dagRuns", "~", "taskInstances", "~", "xcomEntries"),
    { query: { ...pageQuery(), order_by: "-run_after" } });
  return [page.xcom_entries.length ? h("div", { class: "scroll" }, table(["Key", "DAG", "Run", "Task", "Map index",
    "When", "Value"], page.xcom_entries.map((x) => h("tr", {}, [h("code", {}, x.key),
    navLink(link("dags", x.dag_id), x.dag_id), navLink(link("dags", x.dag_id, "runs", x.run_id), x.run_id),
    navLink(tiHref({ ...x, dag_run_id: x.run_id }), x.task_display_name || x.task_id),
    x.map_index >= 0 ? String(x.map_index) : "", time(x.timestamp), "value" in x ? json(x.value) : ""]
    .map((cell) => h("td", {}, cell)))), { class: "list" })) : h("p", { class: "muted" }, "No XComs."),
  pager(page.total_entries, draw)];
});
