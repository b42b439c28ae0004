// The DAG's Details tab (/dags/{dag_id}/details): what GET dags/{dag_id}/details says of it, as Airflow's tab lists
// it, and its doc_md drawn as Markdown (the author's text: drawn by markdown.js, which parses no HTML).

import { h, json, time } from "./view.js";
import { dagTabPage } from "./dagtabs.js";
import { markdown } from "./markdown.js";

const FIELDS = [
  ["DAG id", (d) => h("code", {}, d.dag_id)], ["Description", (d) => d.description],
  ["Schedule", (d) => d.timetable_description || d.timetable_summary || "None"],
  ["Timetable", (d) => d.timetable_summary], ["Next run", (d) => time(d.next_dagrun_run_after)],
  ["Start date", (d) => time(d.start_date)], ["End date", (d) => time(d.end_date)],
  ["Catchup", (d) => String(d.catchup)], ["Max active runs", (d) => d.max_active_runs],
  ["Max active tasks", (d) => d.max_active_tasks], ["Max consecutive failed runs", (d) => d.max_consecutive_failed_dag_runs],
  ["Run timeout", (d) => d.dag_run_timeout], ["Owners", (d) => (d.owners || []).join(", ")],
  ["Tags", (d) => (d.tags || []).map((t) => t.name).join(", ")], ["Paused", (d) => String(d.is_paused)],
  ["File", (d) => h("code", {}, d.fileloc || d.relative_fileloc)], ["Concurrency limits on tasks",
    (d) => String(d.has_task_concurrency_limits)], ["Render templates as native objects",
    (d) => String(d.render_template_as_native_obj)], ["Default args", (d) => (d.default_args ? json(d.default_args) : null)],
  ["Params", (d) => (d.params && Object.keys(d.params).length ? json(d.params) : null)],
];

export const detailsTab = dagTabPage("details", (box, dagId, details) => {
  box.replaceChildren(
    details.doc_md ? h("section", { class: "doc", "aria-label": "Documentation" }, markdown(details.doc_md)) : "",
    h("dl", { class: "facts details" }, FIELDS.flatMap(([label, value]) => {
      const shown = value(details);
      return shown === undefined || shown === null || shown === "" ? [] : [h("dt", {}, label), h("dd", {}, shown)];
    })));
});
