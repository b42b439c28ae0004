// The DAG's Tasks tab (/dags/{dag_id}/tasks): its tasks as GET dags/{dag_id}/tasks lists them, each linking to the
// task's page (/dags/{dag_id}/tasks/{task_id}: its instances over the runs and their durations).

import { api, link, path } from "./api.js";
import { h, navLink, table } from "./view.js";
import { dagTabPage } from "./dagtabs.js";

export const tasksTab = dagTabPage("tasks", async (box, dagId) => {
  const { tasks } = await api(path("dags", dagId, "tasks"), { query: { order_by: "task_id" } });
  box.replaceChildren(h("div", { class: "scroll" }, table(["Task", "Operator", "Trigger rule", "Retries", "Pool",
    "Mapped", "Downstream"], tasks.map((t) => h("tr", { "data-task-id": t.task_id }, [
    navLink(link("dags", dagId, "tasks", t.task_id), t.task_display_name || t.task_id), t.operator_name,
    t.trigger_rule, String(t.retries ?? 0), t.pool || "default_pool", t.is_mapped ? "yes" : "",
    (t.downstream_task_ids || []).join(", ")].map((cell) => h("td", {}, cell)))), { class: "list" })));
});
