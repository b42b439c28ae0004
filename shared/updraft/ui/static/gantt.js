// A run's Gantt (/dags/{dag_id}/runs/{run_id}/gantt, Updraft's path: Airflow 3.3 draws it in the DAG page's panel):
// every try of every task instance on one time axis, the time it waited queued in a light band before its run bar,
// from one request (GET ui/gantt/{dag_id}/{run_id}). A row links to the try's page; live while the run is not
// finished (running bars grow to now).

import { api, link, path } from "./api.js";
import { colour, svg } from "./charts.js";
import { badge, duration, errorBox, h, navLink } from "./view.js";

const ROW = 22;
const LABEL = 170;
const WIDTH = 900;

const ms = (iso) => (iso ? Date.parse(iso) : null);

/** The chart of ``rows`` (GanttResponse's task_instances). */
export function ganttChart(dagId, runId, rows, now = Date.now()) {
  const spans = rows.map((r) => [ms(r.queued_dttm) ?? ms(r.start_date), ms(r.start_date),
    ms(r.end_date) ?? (r.start_date ? now : null)]);
  const times = spans.flat().filter((t) => t !== null);
  const start = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - start);
  const x = (t) => LABEL + ((t - start) / span) * (WIDTH - LABEL - 10);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => svg("g", {},
    svg("line", { x1: x(start + f * span), x2: x(start + f * span), y1: 14, y2: 18 + rows.length * ROW,
      class: "gridline" }),
    svg("text", { x: x(start + f * span), y: 10, "text-anchor": f === 1 ? "end" : f ? "middle" : "start",
      class: "axis" }, `+${duration((f * span) / 1000)}`)));
  const bars = rows.map((r, i) => {
    const [queued, began, ended] = spans[i];
    const y = 18 + i * ROW;
    const name = `${r.task_display_name}${r.map_index >= 0 ? ` [${r.map_index}]` : ""}`;
    const href = link("dags", dagId, "runs", runId, "tasks", r.task_id,
      ...(r.map_index >= 0 ? ["mapped", String(r.map_index)] : [])) + `?try_number=${r.try_number}`;
    const words = `${name}, try ${r.try_number}: ${(r.state || "no status").replace(/_/g, " ")}`
      + (began !== null ? `, ran ${duration(((ended ?? now) - began) / 1000)}` : "")
      + (queued !== null && began !== null && began > queued ? `, queued ${duration((began - queued) / 1000)}` : "");
    return svg("a", { href, "data-nav": true, class: "gantt-row", "data-task": r.task_id, "data-try": r.try_number },
      svg("title", {}, words),
      svg("text", { x: LABEL - 6, y: y + 15, "text-anchor": "end", class: "label" },
        name.length > 24 ? `${name.slice(0, 23)}…` : name, r.try_number > 1 ? ` (${r.try_number})` : ""),
      queued !== null && began !== null && began > queued ? svg("rect", { x: x(queued), y: y + 6, height: ROW - 12,
        width: Math.max(1, x(began) - x(queued)), class: "queued-band" }) : null,
      began !== null ? svg("rect", { x: x(began), y: y + 3, height: ROW - 6, rx: 2,
        width: Math.max(2, x(ended) - x(began)), fill: colour(r.state), class: `run-bar state-${r.state}` }) : null);
  });
  return svg("svg", { class: "chart gantt", viewBox: `0 0 ${WIDTH} ${24 + rows.length * ROW}`, width: WIDTH,
    height: 24 + rows.length * ROW, role: "img",
    "aria-label": `Gantt of run ${runId}` }, ticks, bars);
}

export async function ganttPage(main, [dagId, runId]) {
  const box = h("div", { class: "chart-box" });
  const head = h("div", {});
  let finished = false;
  async function draw() {
    const [run, gantt] = await Promise.all([api(path("dags", dagId, "dagRuns", runId)),
      api(path("ui", "gantt", dagId, runId))]);
    finished = ["success", "failed"].includes(run.state);
    head.replaceChildren(h("div", { class: "title" }, h("h1", {}, "Gantt ", h("code", {}, runId)), badge(run.state),
      h("span", { class: "muted" }, `Duration ${duration(run.duration)}`)));
    const started = gantt.task_instances.filter((r) => r.start_date || r.queued_dttm);
    box.replaceChildren(started.length ? ganttChart(dagId, runId, started)
      : h("p", { class: "muted" }, "No task has started yet."));
  }
  main.replaceChildren(h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("dags"), "DAGs"), " / ",
    navLink(link("dags", dagId), dagId), " / ", navLink(link("dags", dagId, "runs", runId), runId), " / Gantt"),
  head, box);
  try {
    await draw();
  } catch (error) {
    box.replaceChildren(errorBox(error));
    return null;
  }
  return { refresh: draw, live: () => !finished };
}
