// Pools, variables and the audit log: Airflow's list routes drawn as tables (values the API masks stay masked:
// the page shows what the route returns); pools and variables are added, edited and deleted as in Airflow's UI.

import { api, link } from "./api.js";
import { editableList } from "./crud.js";
import { errorBox, h, navLink, table, time } from "./view.js";

const slots = (n) => (n < 0 ? "∞" : String(n));

export const poolsPage = editableList({
  title: "Pools", noun: "pool", rel: "pools", key: "pools", id: "name",
  columns: [["Pool", (p) => p.name], ["Slots", (p) => slots(p.slots)], ["Running", (p) => String(p.running_slots)],
    ["Queued", (p) => String(p.queued_slots)], ["Open", (p) => slots(p.open_slots)],
    ["Description", (p) => p.description || ""]],
  fields: [
    { name: "name", patchAs: "pool", label: "Name", required: true, fixed: true },
    { name: "slots", label: "Slots", kind: "number", required: true, min: -1, initial: 128,
      hint: "-1: unlimited" },
    { name: "description", label: "Description", kind: "textarea" },
    { name: "include_deferred", label: "Include deferred", kind: "checkbox",
      hint: "deferred tasks take slots of the pool too" },
  ],
});

export const variablesPage = editableList({
  title: "Variables", noun: "variable", rel: "variables", key: "variables", id: "key",
  columns: [["Key", (v) => h("code", {}, v.key)], ["Value", (v) => v.value ?? ""],
    ["Description", (v) => v.description || ""]],
  fields: [
    { name: "key", label: "Key", required: true, fixed: true },
    { name: "value", label: "Value", kind: "textarea", required: true },
    { name: "description", label: "Description", kind: "textarea" },
  ],
});

const EVENTS_SHOWN = 100;

/** The latest events, of every DAG or (``dagId``) of one: Airflow's /events and its DAG's Audit Log tab. */
export async function auditLog(box, dagId) {
  const { event_logs: items, total_entries: total } = await api("eventLogs",
    { query: { order_by: "-when", dag_id: dagId, limit: EVENTS_SHOWN } });
  box.replaceChildren(total > items.length ? h("p", { class: "muted" }, `The latest ${items.length} of ${total}.`) : "",
    items.length ? h("div", { class: "scroll" }, table(["When", "Event", "DAG", "Task", "Run", "Owner",
    "Extra"], items.map((e) => h("tr", {}, [time(e.when), e.event,
    e.dag_id ? navLink(link("dags", e.dag_id), e.dag_id) : "", e.task_id || "",
    e.run_id && e.dag_id ? navLink(link("dags", e.dag_id, "runs", e.run_id), e.run_id) : e.run_id || "",
    e.owner || "", e.extra ? h("code", { class: "extra" }, e.extra) : ""].map((cell) => h("td", {}, cell)))),
  { class: "list" })) : h("p", { class: "muted" }, "No events."));
}

export async function eventsPage(main) {
  const box = h("div", {});
  main.replaceChildren(h("h1", {}, "Audit log"), box);
  const draw = () => auditLog(box).catch((error) => box.replaceChildren(errorBox(error)));
  await draw();
  return { refresh: draw, live: () => true };
}
