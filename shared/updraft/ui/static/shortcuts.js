// Keyboard shortcuts, as Airflow 3's UI has them: "?" lists the ones the page in view offers, under Airflow's
// categories, with its keys (Airflow's `shortcuts` in common.json). A shortcut belongs to an element of the page: it
// is declared on the element (data-shortcut and its category and description) and lives exactly as long as the
// element is in the document, so a page's shortcuts come and go with what it draws and nothing registers or
// unregisters them. A key runs the element's "shortcut" handler if it has one, or else clicks it (a button) or
// focuses it (a field). Keys typed into a field are the field's, except those declared for fields too (Ctrl+K).

import { actionButton, h } from "./view.js";

export const MAC = /Mac|iPhone|iPad/.test(navigator.platform);

// Airflow's categories, in the order its help dialog lists them.
const CATEGORIES = { global: "Global", navigation: "Navigation", dagView: "Dag View", search: "Search",
  filters: "Filters", logs: "Logs", code: "Code", runActions: "Run & Task Actions" };

const HELP = "?";

/** Declares ``keys`` (Airflow's notation: "shift+c", "mod+ArrowDown", "/"; one or a list) on ``element`` under
 * ``category`` with ``description``; ``run(event)`` is what they do (default: click a button, focus a field).
 * Answers the element. */
export function withShortcut(element, { keys, category, description, run = null, inFields = false }) {
  if (!(category in CATEGORIES)) throw new Error(`unknown shortcut category ${category}`);
  element.dataset.shortcut = [].concat(keys).join(" ");
  element.dataset.shortcutCategory = category;
  element.dataset.shortcutDescription = description;
  if (inFields) element.dataset.shortcutInFields = "";
  if (run) element.addEventListener("shortcut", (event) => { event.preventDefault(); run(event.detail); });
  return element;
}

/** A toggle button showing its state in aria-pressed, answering ``shortcut``'s keys; ``change(on)`` runs at each
 * press. */
export function toggleWithShortcut(label, on, change, shortcut) {
  const button = h("button", { type: "button", class: "toggle", "aria-pressed": String(on) }, label);
  button.addEventListener("click", () => {
    const now = button.getAttribute("aria-pressed") !== "true";
    button.setAttribute("aria-pressed", String(now));
    change(now);
  });
  return withShortcut(button, shortcut);
}

/** A "Full screen" toggle (key f) laying ``target()`` over the whole window, as Airflow's full-screen dialogs of
 * a log or code; Escape leaves it. */
export function fullScreenToggle(target, category) {
  const leave = (event) => { if (event.key === "Escape") button.click(); };
  const button = toggleWithShortcut("Full screen", false, (on) => {
    target().classList.toggle("full-screen", on);
    document[on ? "addEventListener" : "removeEventListener"]("keydown", leave);
  }, { keys: "f", category, description: "Toggle fullscreen" });
  return button;
}

/** view.js's actionButton whose button answers ``keys``, listed under Run & Task Actions. */
export function actionWithShortcut(text, action, keys, description) {
  const control = actionButton(text, action);
  withShortcut(control.querySelector("button"), { keys, category: "runActions", description });
  return control;
}

/** Whether the key ``spec`` is what ``event`` typed. A printable non-letter ("?", "/") is the character typed
 * whatever Shift it took; otherwise every modifier must be as the spec says ("mod" is Ctrl, or ⌘ on a Mac). */
function typed(spec, event) {
  const parts = spec.split("+");
  const key = parts.pop();
  const mods = new Set(parts);
  if (event.altKey || mods.has("mod") !== (MAC ? event.metaKey : event.ctrlKey)) return false;
  if ((MAC ? event.ctrlKey : event.metaKey)) return false;
  if (key.length === 1 && !/[a-z0-9]/i.test(key)) return event.key === key;
  if (mods.has("shift") !== event.shiftKey) return false;
  return event.key.toLowerCase() === key.toLowerCase() || (key === "space" && event.key === " ");
}

/** How ``spec`` is shown: "Shift + C", "Ctrl + ↓" (⌘ on a Mac). */
export function keyLabel(spec) {
  const names = { mod: MAC ? "⌘" : "Ctrl", shift: "Shift", ArrowDown: "↓", ArrowUp: "↑", ArrowLeft: "←",
    ArrowRight: "→", space: "Space" };
  return spec.split("+").map((part) => names[part] || (part.length === 1 ? part.toUpperCase() : part)).join(" + ");
}

function declared() {
  return [...document.querySelectorAll("[data-shortcut]")];
}

function inField(target) {
  return target instanceof Element && Boolean(target.closest("input, textarea, select, [contenteditable]"));
}

/** The "?" dialog: every shortcut the page offers now, by category; Escape or a click outside closes it. */
export function showHelp() {
  const rows = new Map(Object.keys(CATEGORIES).map((category) => [category, []]));
  rows.get("global").push([[HELP], "Show Keyboard Shortcuts"]);
  const seen = new Set();
  for (const element of declared()) {
    const { shortcut, shortcutCategory: category, shortcutDescription: description } = element.dataset;
    if (seen.has(`${category}/${description}`)) continue; // one row per shortcut, however many elements share it
    seen.add(`${category}/${description}`);
    rows.get(category).push([shortcut.split(" "), description]);
  }
  const dialog = h("dialog", { class: "shortcuts", "aria-label": "Keyboard Shortcuts" },
    h("h2", {}, "Keyboard Shortcuts"),
    [...rows].filter(([, list]) => list.length).map(([category, list]) => h("section", {},
      h("h3", {}, CATEGORIES[category]),
      h("dl", {}, list.map(([keys, description]) => [
        h("dt", {}, keys.map((spec, i) => [i ? " " : "", h("kbd", {}, keyLabel(spec))])),
        h("dd", {}, description)])))),
    h("form", { method: "dialog" }, h("button", { type: "submit" }, "Close")));
  dialog.addEventListener("close", () => dialog.remove());
  dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); });
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

/** Listens for the page's shortcuts on ``document`` (once, from app.js). */
export function listen() {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.isComposing || event.repeat) return;
    const field = inField(event.target);
    if (event.key === HELP && !field && !document.querySelector("dialog[open]")) {
      event.preventDefault();
      showHelp();
      return;
    }
    // The innermost open dialog takes keys for itself; elsewhere the last element declaring the key (the one
    // nearest the page's end, as a task's actions come after its run's).
    const modal = [...document.querySelectorAll("dialog[open]")].pop();
    const element = declared().reverse().find((candidate) => (!modal || modal.contains(candidate))
      && (!field || "shortcutInFields" in candidate.dataset)
      && candidate.dataset.shortcut.split(" ").some((spec) => typed(spec, event)));
    if (!element) return;
    event.preventDefault(); // the browser's own meaning of the key (Ctrl+K: its search bar; "/": quick find)
    const ran = !element.dispatchEvent(new CustomEvent("shortcut", { cancelable: true, detail: event }));
    if (ran) return;
    if (element.matches("input, textarea, select")) element.focus();
    else element.click();
  });
}
