// Small DOM helpers shared by the pages: elements without innerHTML (API text is never parsed as HTML),
// times in the display timezone the header sets (timezone.js) with UTC on hover, and Airflow 3's task states told
// by colour AND symbol.

import { formatInZone } from "./timezone.js";

/** h("a", {href}, "text", child, ...): an element; attributes starting with "on" become listeners. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else if (name === "style" && typeof value === "object") Object.assign(el.style, value);
    else el.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** A link inside the UI (followed without reloading the page). */
export function navLink(href, ...children) {
  return h("a", { href, "data-nav": true }, ...children);
}

/** A time in the display timezone (the header's choice); hovering shows it in UTC, as Airflow's UI does. */
export function time(iso) {
  if (!iso) return h("span", { class: "muted" }, "—");
  const date = new Date(iso);
  const utc = date.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  return h("time", { datetime: iso, title: utc }, formatInZone(date));
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const s = Math.round(seconds * 10) / 10;
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${Math.round(s % 60)}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

// Airflow 3's state colours (its theme's semantic tokens) and a symbol each, so no state is told by colour alone.
export const STATES = {
  success: ["#16a34a", "✓"], failed: ["#dc2626", "✗"], running: ["#06b6d4", "▶"], queued: ["#a8a29e", "…"],
  scheduled: ["#a1a1aa", "◷"], up_for_retry: ["#eab308", "↻"], up_for_reschedule: ["#38bdf8", "⟲"],
  upstream_failed: ["#f59e0b", "⊘"], skipped: ["#f472b6", "»"], deferred: ["#a855f7", "‖"],
  restarting: ["#8b5cf6", "⟳"], removed: ["#d4d4d8", "−"], awaiting_input: ["#f97316", "?"], none: ["#ffffff", "·"],
};

// Where a state's colour is drawn as a line (the graph's node border), "no status" needs one that shows.
export const OUTLINE = { none: "#94a3b8" };

export function stateLabel(state) {
  return (state || "no status").replace(/_/g, " ");
}

/** A coloured square with the state's symbol; its accessible name and tooltip say the state in words. */
export function stateCell(state, { label = "", attrs = {} } = {}) {
  const [colour, symbol] = STATES[state || "none"] || STATES.none;
  const words = `${label ? label + ": " : ""}${stateLabel(state)}`;
  return h("span", { class: `cell state-${state || "none"}`, style: { background: colour }, title: words,
    "aria-label": words, ...attrs }, symbol);
}

export function badge(state) {
  const [colour, symbol] = STATES[state || "none"] || STATES.none;
  return h("span", { class: `badge state-${state || "none"}`, style: { borderColor: colour } },
    h("span", { class: "dot", style: { background: colour }, "aria-hidden": "true" }, symbol), stateLabel(state));
}

export function legend() {
  return h("ul", { class: "legend", "aria-label": "States" },
    Object.keys(STATES).map((state) => h("li", {}, stateCell(state, { attrs: { "aria-hidden": "true" } }),
      stateLabel(state === "none" ? null : state))));
}

export function table(headers, rows, attrs = {}) {
  return h("table", attrs, h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, rows));
}

export function errorBox(error) {
  return h("div", { class: "error", role: "alert" }, error.status ? `${error.status}: ${error.message}` : String(error));
}

/** JSON on one line when short, indented when not. */
export function json(value) {
  const pretty = JSON.stringify(value, null, 2) ?? "null";
  const flat = JSON.stringify(value, null, 1)?.replace(/\n\s*/g, " ") ?? "null"; // newlines only between tokens
  return h("pre", { class: "json" }, flat.length <= 80 ? flat : pretty);
}

/** A button that runs an async action and shows its error next to it instead of failing silently. */
export function actionButton(text, action, attrs = {}) {
  const out = h("span", { class: "action" });
  const button = h("button", { type: "button", ...attrs, onclick: async () => {
    button.disabled = true;
    out.querySelector(".error")?.remove();
    try {
      await action();
    } catch (error) {
      out.append(errorBox(error));
    } finally {
      button.disabled = false;
    }
  } }, text);
  out.append(button);
  return out;
}

/** A form in a panel: its fields, a submit button (named ``submitText``, else ``title``) and Cancel; an error that
 * ``submit`` throws (the API's refusal) is shown in the form instead of failing silently. */
export function dialog(title, fields, submit, close, submitText = title) {
  const errors = h("div", {});
  const form = h("form", { class: "panel", "aria-label": title },
    h("h2", {}, title), fields, errors,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, submitText),
      h("button", { type: "button", onclick: close }, "Cancel")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errors.replaceChildren();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      await submit();
    } catch (error) {
      errors.replaceChildren(errorBox(error));
    } finally {
      button.disabled = false;
    }
  });
  return form;
}
