// A DAG's graph: tasks as boxes wide enough for their whole id, edges to their downstream tasks, laid out left to
// right by dagre (layering, crossing reduction and edge routing around the boxes; MIT, vendored as
// dagre-3.1.3.js and imported only when a graph is drawn, so no other page loads it), coloured by a run's states.
// The drawing zooms (wheel, or the + and − buttons) and pans (drag); Fit shows it whole again.

import { link } from "./api.js";
import { summaryState } from "./grid.js";
import { OUTLINE, STATES, h, stateLabel } from "./view.js";

const SVG = "http://www.w3.org/2000/svg";
const NODE_H = 34;
const SYMBOL_W = 22;
const MAX_HEIGHT = 560; // the drawing's box at most (px); a taller graph is fitted smaller, then zoomed
const ZOOM_STEP = 1.25;

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) el.setAttribute(name, value);
  el.append(...children.flat());
  return el;
}

let library = null;
/** dagre, loaded on the first graph (a module of its own beside this one: same origin, cached as immutable). */
function dagre() {
  library ??= import("./dagre-3.1.3.js").then((module) => module.default);
  return library;
}

let canvas = null;
/** How wide ``text`` is drawn in the graph's label font (a box is as wide as its id needs, never cut). */
function textWidth(text, font) {
  canvas ??= document.createElement("canvas");
  const context = canvas.getContext("2d");
  context.font = font;
  return context.measureText(text).width;
}

/** The layout: each task's box (centre x, y, width) and each edge's points, from dagre. */
function layout(lib, tasks, font) {
  const g = new lib.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: 14, ranksep: 40, edgesep: 8, marginx: 6, marginy: 6 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const t of tasks) {
    g.setNode(t.task_id, { width: Math.ceil(SYMBOL_W + 16 + textWidth(t.task_id, font)), height: NODE_H });
  }
  const known = new Set(tasks.map((t) => t.task_id));
  for (const t of tasks) for (const d of t.downstream_task_ids) if (known.has(d)) g.setEdge(t.task_id, d);
  lib.layout(g);
  const { width, height } = g.graph();
  return { width, height, node: (id) => g.node(id), edges: g.edges().map((e) => [e.v, e.w, g.edge(e).points]) };
}

/** Draws the graph of ``tasks`` into ``box``; answers { colour(runId, tisByTask) } to show a run's states. */
export async function graphView(dagId, tasks, box) {
  box.replaceChildren(h("h2", {}, "Graph"), h("p", { class: "loading", role: "status" }, "Laying out the graph…"));
  const lib = await dagre();
  const font = `12px ${getComputedStyle(document.body).fontFamily}`;
  const drawn = layout(lib, tasks, font);
  const svg = s("svg", { class: "graph", role: "group", "aria-label": `Graph of ${tasks.length} tasks` });
  svg.append(s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6,
    markerHeight: 6, orient: "auto-start-reverse" }, s("path", { class: "arrow", d: "M 0 0 L 10 5 L 0 10 z" }))));
  const content = s("g", {});
  svg.append(content);
  for (const [from, to, points] of drawn.edges) {
    const d = points.map((p, i) => `${i ? "L" : "M"} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(" ");
    content.append(s("path", { class: "edge", "data-edge": `${from}->${to}`, "marker-end": "url(#arrow)", d }));
  }
  const nodes = new Map();
  for (const t of tasks) {
    const { x: cx, y: cy, width } = drawn.node(t.task_id);
    const x = cx - width / 2;
    const y = cy - NODE_H / 2;
    const parts = {
      title: s("title", {}),
      box: s("rect", { class: "box", x, y, width, height: NODE_H, rx: 6, "stroke-width": 3 }),
      band: s("rect", { x, y, width: SYMBOL_W, height: NODE_H, rx: 6 }),
      symbol: s("text", { x: x + SYMBOL_W / 2, y: y + NODE_H / 2 + 5, "text-anchor": "middle" }),
    };
    const node = s("g", { class: "node", "data-task-id": t.task_id }, parts.title, parts.box, parts.band, parts.symbol,
      s("text", { class: "label", x: x + SYMBOL_W + 8, y: y + NODE_H / 2 + 4 }, t.task_id));
    const anchor = s("a", {}, node);
    content.append(anchor);
    nodes.set(t.task_id, { ...parts, anchor, task: t });
  }
  const tools = h("div", { class: "graph-tools" });
  box.replaceChildren(h("h2", {}, "Graph", h("span", { class: "muted run-name" })), tools, svg);
  const pan = zoomAndPan(svg, drawn.width, drawn.height, box.clientWidth || 800);
  tools.append(
    h("button", { type: "button", "aria-label": "Zoom in", onclick: () => pan.zoom(1 / ZOOM_STEP) }, "+"),
    h("button", { type: "button", "aria-label": "Zoom out", onclick: () => pan.zoom(ZOOM_STEP) }, "−"),
    h("button", { type: "button", onclick: pan.fit }, "Fit"),
    h("span", { class: "muted" }, "Scroll to zoom, drag to move."));

  function colour(runId, tis) {
    box.querySelector(".run-name").textContent = runId ? ` — run ${runId}` : "";
    svg.setAttribute("aria-label", `Graph of ${tasks.length} tasks` + (runId ? `, coloured by run ${runId}` : ""));
    for (const [id, n] of nodes) {
      const mine = tis?.get(id) || [];
      const state = n.task.is_mapped ? summaryState(mine.map((i) => i.state)) : mine[0]?.state ?? null;
      const [fill, symbol] = STATES[state || "none"];
      const line = OUTLINE[state || "none"] || fill;
      n.title.textContent = `${id}: ${stateLabel(state)}`;
      n.box.setAttribute("stroke", line);
      n.band.setAttribute("fill", line);
      n.symbol.textContent = symbol;
      n.symbol.setAttribute("class", state ? "symbol" : "symbol none");
      if (runId) {
        n.anchor.setAttribute("href", link("dags", dagId, "runs", runId, "tasks", id));
        n.anchor.setAttribute("data-nav", "");
      } else {
        n.anchor.removeAttribute("href");
        n.anchor.removeAttribute("data-nav");
      }
    }
  }
  colour(null, null);
  return { colour };
}

/** The drawing's viewBox, fitted to ``width`` px of page (never scaled up, at most MAX_HEIGHT tall), zoomed about
 * the pointer by the wheel and moved by dragging; ``fit`` goes back. Only the drawing moves, never the page. */
function zoomAndPan(svg, contentW, contentH, boxW) {
  const scale = Math.min(1, boxW / contentW, MAX_HEIGHT / contentH);
  const viewW = boxW;
  const viewH = Math.ceil(contentH * scale) + 2;
  svg.setAttribute("height", String(viewH));
  const fitted = { x: 0, y: 0, w: viewW / scale, h: viewH / scale };
  let view = { ...fitted };
  const show = () => svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].map((n) => +n.toFixed(2)).join(" "));
  const zoom = (factor, at = { x: 0.5, y: 0.5 }) => {
    const w = Math.min(fitted.w * 8, Math.max(fitted.w / 8, view.w * factor));
    const f = w / view.w;
    view = { x: view.x + (view.w - w) * at.x, y: view.y + (view.h - view.h * f) * at.y, w, h: view.h * f };
    show();
  };
  svg.addEventListener("wheel", (event) => {
    event.preventDefault(); // the wheel zooms the drawing, not the page
    const r = svg.getBoundingClientRect();
    zoom(event.deltaY < 0 ? 1 / ZOOM_STEP : ZOOM_STEP, { x: (event.clientX - r.left) / r.width,
      y: (event.clientY - r.top) / r.height });
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, view: { ...view }, moved: false };
  });
  svg.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const r = svg.getBoundingClientRect();
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 3) return; // a click on a task, not a drag
    if (!drag.moved) svg.setPointerCapture(event.pointerId);
    drag.moved = true;
    svg.classList.add("dragging");
    view = { ...drag.view, x: drag.view.x - dx * (view.w / r.width), y: drag.view.y - dy * (view.h / r.height) };
    show();
  });
  const end = (event) => {
    if (drag?.moved) {
      svg.classList.remove("dragging");
      // A drag that ends on a task is no click on it.
      svg.addEventListener("click", (e) => { e.preventDefault(); e.stopPropagation(); }, { capture: true, once: true });
      if (svg.hasPointerCapture(event.pointerId)) svg.releasePointerCapture(event.pointerId);
    }
    drag = null;
  };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointercancel", end);
  show();
  return { zoom, fit: () => { view = { ...fitted }; show(); } };
}
