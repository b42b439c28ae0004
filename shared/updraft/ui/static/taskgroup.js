// A task group on Airflow 3's paths: in one run (/dags/{dag_id}/runs/{run_id}/tasks/group/{group_id}: the group's
// state as the grid shows it, its instances by state, and each instance) and across runs
// (/dags/{dag_id}/tasks/group/{group_id}: its tasks, each linking to the task across runs). A group's tasks are
// those whose id starts with "<group_id>." (the prefixed ids Airflow gives a group's tasks by default), as the grid
// groups them.

import { all, api, link, path } from "./api.js";
import { summaryState } from "./grid.js";
import { badge, duration, errorBox, h, navLink, stateCell, stateLabel, table, time } from "./view.js";

const inGroup = (groupId) => (taskId) => taskId.startsWith(`${groupId}.`);
const FINISHED = ["success", "failed", "skipped", "removed", "upstream_failed"];

function crumbs(dagId, runId, groupId) {
  return h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("dags"), "DAGs"), " / ",
    navLink(link("dags", dagId), dagId), " / ",
    runId ? [navLink(link("dags", dagId, "runs", runId), runId), " / "] : "", `${groupId}`);
}

function tiHref(dagId, ti) {
  return link("dags", dagId, "runs", ti.dag_run_id, "tasks", ti.task_id,
    ...(ti.map_index >= 0 ? ["mapped", String(ti.map_index)] : []));
}

/** The group in one run: its summary state, a count per state, and each of its instances. */
export async function runGroupPage(main, [dagId, runId, groupId]) {
  const body = h("div", {}, h("p", { class: "muted loading" }, "Loading…"));
  main.replaceChildren(crumbs(dagId, runId, groupId),
    h("h1", {}, "Task group ", h("code", {}, groupId)), h("p", {}, navLink(link("dags", dagId, "tasks", "group",
      groupId), "The group across runs")), body);
  let live = true;
  async function draw() {
    try {
      const tis = (await all(path("dags", dagId, "dagRuns", runId, "taskInstances"), "task_instances"))
        .filter((ti) => inGroup(groupId)(ti.task_id))
        .sort((a, b) => a.task_id.localeCompare(b.task_id) || a.map_index - b.map_index);
      live = tis.some((ti) => !FINISHED.includes(ti.state));
      if (!tis.length) {
        body.replaceChildren(h("p", { class: "muted" }, `No task instances of group ${groupId} in this run.`));
        return;
      }
      const counts = new Map();
      for (const ti of tis) counts.set(ti.state, (counts.get(ti.state) || 0) + 1);
      body.replaceChildren(
        h("section", { class: "group-summary", "aria-label": "Group state" },
          stateCell(summaryState(tis.map((ti) => ti.state)), { label: groupId }),
          h("strong", {}, stateLabel(summaryState(tis.map((ti) => ti.state)))),
          h("ul", { class: "stack-legend" }, [...counts].map(([state, n]) => h("li", {},
            stateCell(state, { attrs: { "aria-hidden": "true" } }), ` ${stateLabel(state)} `,
            h("strong", {}, String(n)))))),
        h("div", { class: "scroll" }, table(["Task", "Map index", "State", "Try", "Started", "Duration"],
          tis.map((ti) => h("tr", { "data-task-id": ti.task_id }, [
            navLink(tiHref(dagId, ti), ti.task_id.slice(groupId.length + 1)),
            ti.map_index >= 0 ? String(ti.map_index) : "", badge(ti.state), String(ti.try_number),
            time(ti.start_date), duration(ti.duration)].map((cell) => h("td", {}, cell)))),
          { class: "list group-tis" })));
    } catch (error) {
      body.replaceChildren(errorBox(error));
    }
  }
  await draw();
  return { refresh: draw, live: () => live };
}

/** The group across runs: its tasks (each to its page across runs). */
export async function dagGroupPage(main, [dagId, groupId]) {
  const body = h("div", {}, h("p", { class: "muted loading" }, "Loading…"));
  main.replaceChildren(crumbs(dagId, null, groupId), h("h1", {}, "Task group ", h("code", {}, groupId)), body);
  try {
    const { tasks } = await api(path("dags", dagId, "tasks"));
    const mine = tasks.filter((t) => inGroup(groupId)(t.task_id));
    body.replaceChildren(mine.length ? h("div", { class: "scroll" }, table(["Task", "Operator", "Mapped", "Trigger rule",
      "Downstream"], mine.map((t) => h("tr", { "data-task-id": t.task_id }, [
      navLink(link("dags", dagId, "tasks", t.task_id), t.task_id.slice(groupId.length + 1)), t.operator_name || "",
      t.is_mapped ? "yes" : "", t.trigger_rule || "", (t.downstream_task_ids || []).join(", ")]
      .map((cell) => h("td", {}, cell)))), { class: "list group-tasks" }))
      : h("p", { class: "muted" }, `DAG ${dagId} has no task group ${groupId}.`));
  } catch (error) {
    body.replaceChildren(errorBox(error));
  }
  return null;
}
