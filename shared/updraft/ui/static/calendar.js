// The DAG's Calendar tab (/dags/{dag_id}/calendar): a year of days as squares, each coloured by its runs (failed
// over running over queued over success, as Airflow's calendar shows the worst), from one request
// (GET ui/calendar/{dag_id}) whatever the run count. Year buttons go back and forth.

import { api, link, path } from "./api.js";
import { colour, svg } from "./charts.js";
import { h } from "./view.js";
import { dagTabPage } from "./dagtabs.js";

const WORST = ["failed", "running", "queued", "success"];
const CELL = 13;

function dayKey(date) {
  return date.toISOString().slice(0, 10);
}

/** The year's grid: a column a week (Sunday first), a row a weekday. */
export function yearGrid(year, byDay, dagId) {
  const first = new Date(Date.UTC(year, 0, 1));
  const days = [];
  for (let d = new Date(first); d.getUTCFullYear() === year; d.setUTCDate(d.getUTCDate() + 1)) days.push(new Date(d));
  const weeks = Math.ceil((days.length + first.getUTCDay()) / 7);
  const months = Array.from({ length: 12 }, (_, m) => {
    const week = Math.floor((Math.round((Date.UTC(year, m, 1) - first) / 86400000) + first.getUTCDay()) / 7);
    return svg("text", { x: 30 + week * CELL, y: 10, class: "axis" },
      new Date(Date.UTC(year, m, 1)).toLocaleString(undefined, { month: "short", timeZone: "UTC" }));
  });
  const cells = days.map((day, i) => {
    const counts = byDay.get(dayKey(day));
    const index = i + first.getUTCDay();
    const state = counts ? WORST.find((s) => counts[s]) || Object.keys(counts)[0] : null;
    const total = counts ? Object.values(counts).reduce((a, b) => a + b, 0) : 0;
    const words = counts ? Object.entries(counts).map(([s, n]) => `${n} ${s}`).join(", ") : "no runs";
    const rect = svg("rect", { x: 30 + Math.floor(index / 7) * CELL, y: 16 + (index % 7) * CELL, width: CELL - 2,
      height: CELL - 2, rx: 2, fill: state ? colour(state) : "#eef2f6", class: state ? `day state-${state}` : "day",
      "data-day": dayKey(day) }, svg("title", {}, `${dayKey(day)}: ${words}`));
    return total ? svg("a", { href: `${link("dags", dagId, "runs")}?day=${dayKey(day)}`, "data-nav": true }, rect)
      : rect;
  });
  const weekdays = [[1, "Mon"], [3, "Wed"], [5, "Fri"]].map(([row, name]) =>
    svg("text", { x: 0, y: 26 + row * CELL, class: "axis" }, name));
  return svg("svg", { class: "chart calendar", viewBox: `0 0 ${30 + weeks * CELL} ${20 + 7 * CELL}`,
    width: 30 + weeks * CELL, height: 20 + 7 * CELL, role: "img",
    "aria-label": `Runs of ${year} by day` }, months, weekdays, cells);
}

export const calendarTab = dagTabPage("calendar", async (box, dagId) => {
  let year = Number(new URLSearchParams(location.search).get("year")) || new Date().getUTCFullYear();
  const body = h("div", {});
  async function draw() {
    const { dag_runs: rows } = await api(path("ui", "calendar", dagId), { query: {
      logical_date_gte: `${year}-01-01T00:00:00Z`, logical_date_lte: `${year}-12-31T23:59:59Z` } });
    const byDay = new Map();
    for (const row of rows) {
      const key = row.date.slice(0, 10);
      const counts = byDay.get(key) || {};
      counts[row.state] = (counts[row.state] || 0) + row.count;
      byDay.set(key, counts);
    }
    const total = rows.reduce((n, r) => n + r.count, 0);
    body.replaceChildren(
      h("div", { class: "actions" },
        h("button", { type: "button", onclick: () => { year -= 1; draw(); } }, "‹ Previous year"),
        h("strong", { class: "year" }, String(year)),
        h("button", { type: "button", onclick: () => { year += 1; draw(); } }, "Next year ›"),
        h("span", { class: "muted" }, `${total} run${total === 1 ? "" : "s"}`)),
      h("div", { class: "chart-box" }, yearGrid(year, byDay, dagId)));
  }
  box.replaceChildren(body);
  await draw();
  return { refresh: draw, live: () => true };
});
