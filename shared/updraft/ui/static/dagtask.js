// A task across the DAG's runs (/dags/{dag_id}/tasks/{task_id}, Airflow's task page): what it is, its last 50
// instances' durations as bars (one request: dagRuns/~/taskInstances?task_id=), and those instances as a table.

import { api, link, path } from "./api.js";
import { durationBars } from "./charts.js";
import { badge, duration, errorBox, h, navLink, table, time } from "./view.js";

const SHOWN = 50;

export async function dagTaskPage(main, [dagId, taskId]) {
  const body = h("div", {});
  async function draw() {
    const { task_instances: tis } = await api(path("dags", dagId, "dagRuns", "~", "taskInstances"),
      { query: { task_id: taskId, order_by: "-run_after", limit: SHOWN } });
    const oldestFirst = tis.slice().reverse();
    const tiLink = (ti) => link("dags", dagId, "runs", ti.dag_run_id, "tasks", taskId,
      ...(ti.map_index >= 0 ? ["mapped", String(ti.map_index)] : []));
    body.replaceChildren(
      h("h2", {}, "Durations"),
      tis.length ? h("div", { class: "chart-box" }, durationBars(oldestFirst.map((ti) => ({
        label: `${ti.dag_run_id}${ti.map_index >= 0 ? ` [${ti.map_index}]` : ""}`, seconds: ti.duration,
        state: ti.state, href: tiLink(ti) })), { title: `Durations of ${taskId}'s last ${tis.length} instances` }))
        : h("p", { class: "muted" }, "No instances yet."),
      h("h2", {}, "Task instances"),
      tis.length ? h("div", { class: "scroll" }, table(["Run", "Map index", "State", "Try", "Started", "Duration"],
        tis.map((ti) => h("tr", {}, [navLink(tiLink(ti), ti.dag_run_id), ti.map_index >= 0 ? String(ti.map_index) : "",
          badge(ti.state), String(ti.try_number), time(ti.start_date), duration(ti.duration)]
          .map((cell) => h("td", {}, cell)))), { class: "list" })) : "");
  }
  let task;
  try {
    task = await api(path("dags", dagId, "tasks", taskId));
  } catch (error) {
    main.replaceChildren(h("h1", {}, taskId), errorBox(error));
    return null;
  }
  main.replaceChildren(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("dags"), "DAGs"), " / ",
      navLink(link("dags", dagId), dagId), " / ", navLink(link("dags", dagId, "tasks"), "Tasks"), ` / ${taskId}`),
    h("h1", {}, task.task_display_name || taskId),
    h("dl", { class: "facts" }, h("dt", {}, "Operator"), h("dd", {}, task.operator_name || "—"),
      h("dt", {}, "Trigger rule"), h("dd", {}, task.trigger_rule || "—"),
      h("dt", {}, "Retries"), h("dd", {}, String(task.retries ?? 0)),
      h("dt", {}, "Downstream"), h("dd", {}, (task.downstream_task_ids || []).join(", ") || "—")),
    body);
  try {
    await draw();
  } catch (error) {
    body.replaceChildren(errorBox(error));
  }
  return { refresh: draw, live: () => true };
}
