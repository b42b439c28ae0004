// A DAG (/dags/{dag_id}) and one of its runs (/dags/{dag_id}/runs/{run_id}): the grid, the graph coloured by
// the selected run, the run's details and task instances, trigger (the params form), clear, mark, backfill.

import { all, api, canEdit, link, path } from "./api.js";
import { pauseSwitch } from "./dags.js";
import { byTask, graph, grid } from "./grid.js";
import { clearButton, noteEditor } from "./runactions.js";
import { dagTabs } from "./dagtabs.js";
import { triggerForm, backfillForm } from "./trigger.js";
import { runCost } from "./cost.js";
import { actionButton, badge, duration, errorBox, h, json, legend, navLink, table, time } from "./view.js";

const GRID_RUNS = 25;
const FINISHED = new Set(["success", "failed"]);

/** Airflow's clear and mark routes for a run (they answer once the API has them). */
function runActions(dagId, run, refresh) {
  if (!canEdit()) return null;
  const runPath = path("dags", dagId, "dagRuns", run.dag_run_id);
  return h("div", { class: "actions" },
    clearButton({ dagId, runId: run.dag_run_id, refresh }),
    actionButton("Mark run success", async () => {
      await api(runPath, { method: "PATCH", body: { state: "success" } });
      await refresh();
    }),
    actionButton("Mark run failed", async () => {
      await api(runPath, { method: "PATCH", body: { state: "failed" } });
      await refresh();
    }));
}

function runDetails(dagId, run, tis, refresh) {
  const rows = [...tis.values()].flat().map((ti) => h("tr", {},
    h("td", {}, navLink(ti.map_index >= 0
      ? link("dags", dagId, "runs", run.dag_run_id, "tasks", ti.task_id, "mapped", String(ti.map_index))
      : link("dags", dagId, "runs", run.dag_run_id, "tasks", ti.task_id),
    ti.task_id, ti.map_index >= 0 ? ` [${ti.map_index}]` : "")),
    h("td", {}, badge(ti.state)), h("td", {}, String(ti.try_number)), h("td", {}, time(ti.start_date)),
    h("td", {}, duration(ti.duration)), h("td", {}, ti.executor || "")));
  return h("section", { class: "run", "aria-label": "Run details" },
    h("h2", {}, "Run ", h("code", {}, run.dag_run_id), " ", badge(run.state)),
    h("dl", { class: "facts" },
      h("dt", {}, "Run type"), h("dd", {}, run.run_type),
      h("dt", {}, "Logical date"), h("dd", {}, time(run.logical_date)),
      h("dt", {}, "Queued"), h("dd", {}, time(run.queued_at)),
      h("dt", {}, "Started"), h("dd", {}, time(run.start_date)),
      h("dt", {}, "Ended"), h("dd", {}, time(run.end_date)),
      h("dt", {}, "Duration"), h("dd", {}, duration(run.duration)),
      h("dt", {}, "Triggered by"), h("dd", {}, run.triggered_by || "—"),
      h("dt", {}, "Note"), h("dd", {}, noteEditor({ dagId, runId: run.dag_run_id, note: run.note })),
      h("dt", {}, "Conf"), h("dd", {}, json(run.conf || {}))),
    runCost(dagId, run),
    runActions(dagId, run, refresh),
    table(["Task", "State", "Try", "Started", "Duration", "Executor"], rows, { class: "tis" }));
}

/** The runs shown (the latest, oldest left) and their instances, one request per run; a finished run's
 * instances come from ``cache`` while the run is unchanged, so a live page only asks for what can still change. */
async function loadGrid(dagId, runId, cache = new Map()) {
  const { dag_runs: latest } = await api(path("dags", dagId, "dagRuns"),
    { query: { limit: GRID_RUNS, order_by: "-run_after" } });
  const runs = latest.reverse();
  if (runId && !runs.some((r) => r.dag_run_id === runId)) runs.push(await api(path("dags", dagId, "dagRuns", runId)));
  const stamp = (run) => `${run.state}|${run.end_date}`;
  const lists = await Promise.all(runs.map((run) => {
    const kept = cache.get(run.dag_run_id);
    if (kept && kept.stamp === stamp(run) && FINISHED.has(run.state)) return kept.tis;
    return all(path("dags", dagId, "dagRuns", run.dag_run_id, "taskInstances"), "task_instances");
  }));
  cache.clear();
  runs.forEach((run, i) => cache.set(run.dag_run_id, { stamp: stamp(run), tis: lists[i] }));
  return { runs, instances: new Map(runs.map((run, i) => [run.dag_run_id, byTask(lists[i])])) };
}

export async function dagPage(main, [dagId, runId], { navigate }) {
  const gridBox = h("div", { class: "grid-box" });
  const graphBox = h("div", { class: "graph-box" });
  const runBox = h("div", {});
  const formBox = h("div", {});
  let details;
  let tasks;
  let state = { runs: [], instances: new Map() };
  const cache = new Map(); // finished runs' instances, by run id

  function draw() {
    const selected = runId || state.runs.at(-1)?.dag_run_id;
    gridBox.replaceChildren(state.runs.length
      ? grid({ dagId, tasks, runs: state.runs, instances: state.instances, selectedRun: runId, redraw: draw })
      : h("p", { class: "muted" }, "No runs yet."));
    graphBox.replaceChildren(h("h2", {}, "Graph", selected ? h("span", { class: "muted" }, ` — run ${selected}`) : ""),
      graph({ dagId, tasks, runId: selected, tis: state.instances.get(selected) }));
    const run = state.runs.find((r) => r.dag_run_id === runId);
    runBox.replaceChildren(run ? runDetails(dagId, run, state.instances.get(runId), refresh) : "");
  }

  async function refresh(stale = () => false) {
    const loaded = await loadGrid(dagId, runId, cache);
    if (stale()) return;
    state = loaded;
    draw();
  }

  try {
    [details, { tasks }] = await Promise.all([api(path("dags", dagId, "details")),
      api(path("dags", dagId, "tasks"))]);
  } catch (error) {
    main.replaceChildren(h("h1", {}, dagId), errorBox(error));
    return null;
  }
  const openForm = (form) => formBox.replaceChildren(form(details, {
    close: () => formBox.replaceChildren(),
    done: (run) => navigate(link("dags", dagId, "runs", run.dag_run_id)),
  }));
  main.replaceChildren(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("dags"), "DAGs"), " / ",
      runId ? [navLink(link("dags", dagId), dagId), ` / ${runId}`] : dagId),
    h("div", { class: "title" }, pauseSwitch(details), h("h1", {}, details.dag_display_name || dagId),
      details.tags.map((t) => h("span", { class: "tag" }, t.name)),
      canEdit() ? h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", onclick: () => openForm(triggerForm) }, "Trigger"),
        h("button", { type: "button", onclick: () => openForm(backfillForm) }, "Backfill")) : null),
    h("p", { class: "muted" }, `Schedule: ${details.timetable_description || details.timetable_summary || "None"}`,
      " · Next run: ", time(details.next_dagrun_run_after), details.description ? ` · ${details.description}` : ""),
    runId ? "" : dagTabs(dagId, ""), formBox, legend(), h("div", { class: "dag-layout" }, h("div", {}, h("h2", {}, "Grid"), gridBox, graphBox), runBox));
  try {
    await refresh();
  } catch (error) {
    gridBox.replaceChildren(errorBox(error));
  }
  // Live while a run is unfinished, or while the DAG is active (its schedule may start one).
  return { refresh, live: () => !details.is_paused || state.runs.some((r) => !FINISHED.has(r.state)) };
}
