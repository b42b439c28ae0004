// Charts as plain SVG, drawn by the views that need them (durations, Gantt, calendar). Why no chart library: these
// are bars on a time or index axis and a grid of squares, each under a hundred lines here, while a well-kept chart
// library is 50-200 KB (Chart.js's ESM build ~200 KB, uPlot ~50 KB) against the UI's ~70 KB of assets in all, and
// would need its own accessible labels anyway. Every mark carries a <title> (its tooltip and accessible name) and
// states keep their symbols and colours from view.js.

import { duration, STATES } from "./view.js";

const NS = "http://www.w3.org/2000/svg";

/** An SVG element: svg("rect", { x: 1 }, child...). Attributes only (no inline style: the page's CSP). */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null && value !== false) {
      if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
      else el.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child !== undefined && child !== null && child !== false) {
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return el;
}

export function colour(state) {
  return (STATES[state || "none"] || STATES.none)[0];
}

/** A round upper bound for an axis (1, 2 or 5 times a power of ten) at or above ``max``. */
function niceMax(max) {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= max);
}

/** Bars of durations (seconds), one per item: { label, seconds, state, href }; a bar links when href is given.
 * The SVG scales to its box's width (viewBox) so the page never scrolls sideways. */
export function durationBars(items, { title, height = 180 } = {}) {
  const width = Math.max(320, items.length * 18 + 60);
  const top = niceMax(Math.max(0, ...items.map((i) => i.seconds || 0)));
  const plot = height - 30;
  const step = (width - 50) / Math.max(items.length, 1);
  const bars = items.map((item, i) => {
    const h = item.seconds ? Math.max(1, (item.seconds / top) * plot) : 0;
    const bar = svg("rect", { x: 45 + i * step + step * 0.15, y: 10 + plot - h, width: Math.max(2, step * 0.7),
      height: h, fill: colour(item.state), class: "bar" },
    svg("title", {}, `${item.label}: ${duration(item.seconds)} (${(item.state || "no status").replace(/_/g, " ")})`));
    return item.href ? svg("a", { href: item.href, "data-nav": true }, bar) : bar;
  });
  const ticks = [0, top / 2, top].map((v) => svg("g", {},
    svg("line", { x1: 40, x2: width, y1: 10 + plot - (v / top) * plot, y2: 10 + plot - (v / top) * plot,
      class: "gridline" }),
    svg("text", { x: 36, y: 14 + plot - (v / top) * plot, "text-anchor": "end", class: "axis" }, duration(v))));
  return svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": title,
    preserveAspectRatio: "xMinYMin meet" }, svg("title", {}, title), ticks, bars);
}
