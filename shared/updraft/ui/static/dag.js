// A DAG (/dags/{dag_id}) and one of its runs (/dags/{dag_id}/runs/{run_id}): the grid (a page of runs, with
// Airflow's run-count choice and paging), the run's details and task instances beside it where they fit (under
// it where not), the graph coloured by the selected run below both, trigger (the params form), clear, mark,
// backfill. Three requests whatever the run count: the DAG's details, its tasks, and the grid route.

import { api, canEdit, link, path } from "./api.js";
import { pauseSwitch } from "./dags.js";
import { byTask, grid, moveFocus } from "./grid.js";
import { graphView } from "./graph.js";
import { clearButton, noteEditor } from "./runactions.js";
import { dagTabs } from "./dagtabs.js";
import { triggerForm, backfillForm } from "./trigger.js";
import { runCost } from "./cost.js";
import { actionWithShortcut, withShortcut } from "./shortcuts.js";
import { badge, duration, errorBox, h, json, legend, navLink, table, time } from "./view.js";

const GRID_RUNS = 25;
const FINISHED = new Set(["success", "failed"]);

/** Airflow's clear and mark routes for a run (they answer once the API has them). */
function runActions(dagId, run, refresh) {
  if (!canEdit()) return null;
  const runPath = path("dags", dagId, "dagRuns", run.dag_run_id);
  return h("div", { class: "actions" },
    clearButton({ dagId, runId: run.dag_run_id, refresh }),
    actionWithShortcut("Mark run success", async () => {
      await api(runPath, { method: "PATCH", body: { state: "success" } });
      await refresh();
    }, "shift+s", "Mark Dag Run as success"),
    actionWithShortcut("Mark run failed", async () => {
      await api(runPath, { method: "PATCH", body: { state: "failed" } });
      await refresh();
    }, "shift+f", "Mark Dag Run as failed"));
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

/** One page of runs (oldest left) and their instances by task: one request whatever the run count (the grid
 * route answers both); ``runId``'s run is added when it is older than the page. */
async function loadGrid(dagId, runId, { limit, offset }) {
  const answer = await api(path("dags", dagId, "grid"), { query: { limit, offset, run_id: runId } });
  const runs = answer.dag_runs.reverse();
  return { runs, hasMore: answer.has_more,
    instances: new Map(runs.map((run) => [run.dag_run_id, byTask(answer.task_instances[run.dag_run_id] || [])])) };
}

const RUN_COUNTS = [5, 10, 25, 50, 100, 365]; // Airflow's grid run-count choices

export async function dagPage(main, [dagId, runId], { navigate }) {
  const query = new URLSearchParams(location.search);
  const paging = { limit: RUN_COUNTS.includes(Number(query.get("runs"))) ? Number(query.get("runs")) : GRID_RUNS,
    offset: Math.max(0, Number(query.get("offset")) || 0) };
  const gridBox = withShortcut(h("div", { class: "grid-box" },
    h("p", { class: "loading", role: "status" }, "Loading the grid…")), {
    keys: ["shift+ArrowDown", "shift+ArrowUp", "shift+ArrowLeft", "shift+ArrowRight"], category: "navigation",
    description: "Navigate Tasks", run: (event) => {
      const table = gridBox.querySelector("table.grid");
      if (table) moveFocus(table, event.key);
    } });
  const pager = h("div", { class: "pager" });
  const graphBox = h("section", { class: "graph-box", "aria-label": "Graph", tabindex: "-1" });
  const runBox = h("div", { class: "run-col" });
  const gridCol = h("section", { class: "grid-col", "aria-label": "Grid", tabindex: "-1" }, h("h2", {}, "Grid"), pager,
    gridBox);
  const formBox = h("div", {});
  let details;
  let tasks;
  let drawnGraph = null; // the graph once laid out: recoloured by each refresh, never laid out again
  let state = { runs: [], instances: new Map(), hasMore: false };

  function drawPager() {
    const count = h("select", { "aria-label": "Runs shown" },
      RUN_COUNTS.map((n) => h("option", { value: String(n), selected: n === paging.limit }, String(n))));
    count.addEventListener("change", () => page({ limit: Number(count.value), offset: 0 }));
    pager.replaceChildren(h("label", {}, "Runs ", count),
      h("button", { type: "button", disabled: paging.offset === 0,
        onclick: () => page({ offset: Math.max(0, paging.offset - paging.limit) }) }, "Newer"),
      h("button", { type: "button", disabled: !state.hasMore,
        onclick: () => page({ offset: paging.offset + paging.limit }) }, "Older"),
      paging.offset ? h("span", { class: "muted" }, `${paging.offset} newer runs not shown`) : "");
  }

  async function page(change) {
    Object.assign(paging, change);
    const q = new URLSearchParams(location.search);
    q.delete("runs");
    q.delete("offset");
    if (paging.limit !== GRID_RUNS) q.set("runs", String(paging.limit));
    if (paging.offset) q.set("offset", String(paging.offset));
    history.replaceState(null, "", location.pathname + (q.toString() ? `?${q}` : ""));
    gridBox.replaceChildren(h("p", { class: "loading", role: "status" }, "Loading the grid…"));
    await refresh().catch((error) => gridBox.replaceChildren(errorBox(error)));
  }

  function draw() {
    const selected = runId || state.runs.at(-1)?.dag_run_id;
    drawPager();
    // A cell focused by the keyboard keeps the focus when a refresh redraws the grid.
    const focused = gridBox.contains(document.activeElement) ? document.activeElement.getAttribute("href") : null;
    gridBox.replaceChildren(state.runs.length
      ? grid({ dagId, tasks, runs: state.runs, instances: state.instances, selectedRun: runId, redraw: draw })
      : h("p", { class: "muted" }, "No runs yet."));
    if (focused) gridBox.querySelector(`a[href="${CSS.escape(focused)}"]`)?.focus();
    drawnGraph?.colour(selected, state.instances.get(selected));
    const run = state.runs.find((r) => r.dag_run_id === runId);
    runBox.replaceChildren(run ? runDetails(dagId, run, state.instances.get(runId), refresh) : "");
  }

  async function refresh(stale = () => false) {
    const loaded = await loadGrid(dagId, runId, paging);
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
    runId ? "" : dagTabs(dagId, ""), formBox, legend(),
    h("div", { class: "dag-layout" }, gridCol, runBox),
    graphBox);
  // Airflow's "g" switches its one pane between graph and grid; here both are drawn, so it moves between them.
  withShortcut(graphBox, { keys: "g", category: "dagView", description: "Toggle graph / grid view", run: () => {
    const to = graphBox.contains(document.activeElement) ? gridCol : graphBox;
    to.focus({ preventScroll: true });
    to.scrollIntoView({ block: "nearest" });
  } });
  // The graph's layout library loads only here, beside the grid's request (first paint does not wait for it).
  const graphDrawn = graphView(dagId, tasks, graphBox).then((view) => {
    drawnGraph = view;
    const selected = runId || state.runs.at(-1)?.dag_run_id;
    view.colour(selected, state.instances.get(selected));
  }).catch((error) => graphBox.replaceChildren(errorBox(error)));
  try {
    await refresh();
  } catch (error) {
    gridBox.replaceChildren(errorBox(error));
  }
  await graphDrawn;
  // Live while a run is unfinished, or while the DAG is active (its schedule may start one).
  return { refresh, live: () => !details.is_paused || state.runs.some((r) => !FINISHED.has(r.state)) };
}
