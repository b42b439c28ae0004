// A DAG's grid: runs as columns (oldest left, each under a bar as tall as its duration), tasks as rows, coloured
// by Airflow's state colours with a symbol per state. Task groups (dotted ids) collapse; mapped tasks show a count.

import { link } from "./api.js";
import { duration, h, navLink, stateCell } from "./view.js";

// Which state a set of instances shows (a mapped task, a group): Airflow's grid order, the most urgent first.
const PRIORITY = ["failed", "upstream_failed", "up_for_retry", "up_for_reschedule", "running", "restarting", "deferred",
  "awaiting_input", "queued", "scheduled", "success", "skipped", "removed"];

export function summaryState(states) {
  const found = PRIORITY.find((p) => states.includes(p)) ?? null;
  // Some instances done and the rest not started yet is not "success": the set is not finished.
  return states.some((s) => !s) && ["success", "skipped", "removed"].includes(found) ? null : found;
}

/** The instances of one run by task id (several for a mapped task). */
export function byTask(instances) {
  const out = new Map();
  for (const ti of instances) {
    if (!out.has(ti.task_id)) out.set(ti.task_id, []);
    out.get(ti.task_id).push(ti);
  }
  return out;
}

const collapsed = new Set(); // groups the user folded (kept while the page lives)

/** Each task's layer: the longest path to it from a task with no upstream. */
function layers(tasks) {
  const upstream = new Map(tasks.map((t) => [t.task_id, []]));
  for (const t of tasks) for (const d of t.downstream_task_ids) upstream.get(d)?.push(t.task_id);
  const layer = new Map();
  const depth = (id, trail = new Set()) => {
    if (layer.has(id)) return layer.get(id);
    if (trail.has(id)) return 0;
    trail.add(id);
    const value = Math.max(-1, ...upstream.get(id).map((u) => depth(u, trail))) + 1;
    layer.set(id, value);
    return value;
  };
  tasks.forEach((t) => depth(t.task_id));
  return layer;
}

/** Tasks upstream first (as Airflow's grid lists them), a group's tasks together where its first task is. */
function ordered(tasks) {
  const layer = layers(tasks);
  const topo = [...tasks].sort((a, b) => layer.get(a.task_id) - layer.get(b.task_id)
    || a.task_id.localeCompare(b.task_id));
  const out = [];
  const placed = new Set();
  for (const task of topo) {
    const prefix = task.task_id.includes(".") ? task.task_id.split(".")[0] + "." : null;
    for (const t of prefix ? topo.filter((o) => o.task_id.startsWith(prefix)) : [task]) {
      if (!placed.has(t.task_id)) out.push(t);
      placed.add(t.task_id);
    }
  }
  return out;
}

/** Rows: tasks in order, with a header row before each task group's first task. */
function rowsOf(tasks) {
  const rows = [];
  const seen = new Set();
  for (const task of ordered(tasks)) {
    const parts = task.task_id.split(".");
    for (let i = 1; i < parts.length; i++) {
      const group = parts.slice(0, i).join(".");
      if (!seen.has(group)) {
        seen.add(group);
        rows.push({ group, depth: i - 1 });
      }
    }
    rows.push({ task, depth: parts.length - 1 });
  }
  return rows;
}

function hidden(id) {
  for (const group of collapsed) if (id.startsWith(group + ".")) return true;
  return false;
}

const STEPS = { ArrowDown: [1, 0], ArrowUp: [-1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

/** Moves the focus one cell of the grid ``table`` in the direction of the arrow ``key`` (from the focused cell;
 * from the newest run's first task when none is), as Airflow's grid moves its selection; Enter then opens it. The
 * run headers are the top row, so Up from a first task reaches its run. */
export function moveFocus(table, key) {
  const rows = [...table.rows].map((row) => [...row.querySelectorAll("a")]).filter((links) => links.length);
  if (!rows.length) return;
  let at = null;
  rows.forEach((links, r) => {
    const c = links.indexOf(document.activeElement);
    if (c >= 0) at = [r, c];
  });
  const [down, right] = STEPS[key];
  const [r, c] = at ? [at[0] + down, at[1] + right] : [Math.min(1, rows.length - 1), rows[0].length - 1];
  const row = rows[Math.max(0, Math.min(rows.length - 1, r))];
  const cell = row[Math.max(0, Math.min(row.length - 1, c))];
  cell.focus();
  cell.scrollIntoView({ block: "nearest", inline: "nearest" });
}

export function grid({ dagId, tasks, runs, instances, selectedRun, redraw }) {
  const longest = Math.max(1, ...runs.map((run) => run.duration || 0));
  const head = h("tr", {}, h("th", { scope: "col", class: "task-col" }, "Task"),
    runs.map((run) => h("th", { scope: "col", class: run.dag_run_id === selectedRun ? "selected" : "" },
      h("div", { class: "bar", title: `${run.dag_run_id}: ${duration(run.duration)}`, "aria-hidden": "true" },
        h("div", { class: "fill", "data-duration": String(run.duration ?? ""),
          style: { height: `${Math.round(40 * (run.duration || 0) / longest)}px` } })),
      navLink(link("dags", dagId, "runs", run.dag_run_id),
        stateCell(run.state, { label: `run ${run.dag_run_id}`, attrs: { class: `cell run state-${run.state}` } })))));
  const body = [];
  for (const row of rowsOf(tasks)) {
    const id = row.group ?? row.task.task_id;
    if (hidden(id)) continue;
    const indent = { paddingLeft: `${0.4 + row.depth * 1.1}em` };
    let label;
    let cellFor;
    if (row.group) {
      const open = !collapsed.has(row.group);
      label = h("th", { scope: "row", style: indent, class: "group" },
        h("button", { type: "button", class: "link", "aria-expanded": String(open),
          onclick: () => { open ? collapsed.add(row.group) : collapsed.delete(row.group); redraw(); } },
        `${open ? "▾" : "▸"} ${row.group.split(".").pop()}`));
      cellFor = (run) => {
        const states = [];
        for (const [taskId, tis] of instances.get(run.dag_run_id) || []) {
          if (taskId.startsWith(row.group + ".")) states.push(...tis.map((t) => t.state));
        }
        return navLink(link("dags", dagId, "runs", run.dag_run_id, "tasks", "group", row.group),
          stateCell(summaryState(states), { label: `${row.group} in ${run.dag_run_id}` }));
      };
    } else {
      const task = row.task;
      const operator = task.operator_name ? ` (${task.operator_name})` : "";
      label = h("th", { scope: "row", style: indent, title: task.task_id + operator },
        task.task_id.split(".").pop(), task.is_mapped ? h("span", { class: "muted" }, " [ ]") : null);
      cellFor = (run) => {
        const tis = (instances.get(run.dag_run_id) || new Map()).get(task.task_id) || [];
        const state = task.is_mapped ? summaryState(tis.map((t) => t.state)) : tis[0]?.state ?? null;
        const cell = stateCell(state, { label: `${task.task_id} in ${run.dag_run_id}` });
        if (task.is_mapped) { // the count inside the square (it widens), never over the next cell
          const count = tis.filter((t) => t.map_index >= 0).length;
          cell.classList.add("mapped");
          cell.append(h("sub", { "aria-hidden": "true" }, String(count)));
          for (const name of ["aria-label", "title"]) cell.setAttribute(name, `${cell.getAttribute(name)} (${count} mapped)`);
        }
        return navLink(link("dags", dagId, "runs", run.dag_run_id, "tasks", task.task_id), cell);
      };
    }
    body.push(h("tr", { "data-row": id }, label, runs.map((run) => h("td", {}, cellFor(run)))));
  }
  return h("table", { class: "grid", "aria-label": "Grid of runs and tasks" }, h("thead", {}, head),
    h("tbody", {}, body));
}
