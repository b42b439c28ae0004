// Clear with its options and a dry run first, and notes, for a run and for a task instance, as Airflow's UI does
// them: the Clear dialog lists what the chosen options would clear (the API's dry run, asked again on every
// change) and clears only when that list is confirmed; a note is edited in place and saved with a PATCH that
// names only the note (update_mask), so nothing else of the run or instance changes.

import { api, canEdit, path } from "./api.js";
import { markdown } from "./markdown.js";
import { withShortcut } from "./shortcuts.js";
import { badge, errorBox, h, table } from "./view.js";

// The task instance's options, in Airflow's order: [body key, label].
const TI_OPTIONS = [
  ["include_past", "Past"], ["include_future", "Future"], ["include_upstream", "Upstream"],
  ["include_downstream", "Downstream"], ["only_failed", "Only failed"],
];

/** The request that clears ``ti`` (or the whole run ``runId`` when ``ti`` is null) with ``options``, as a dry run
 * or not. A run is cleared through its own route, an instance through clearTaskInstances. */
function clearCall(dagId, runId, ti, options, dryRun) {
  if (!ti) {
    return api(`${path("dags", dagId, "dagRuns", runId)}/clear`,
      { method: "POST", body: { dry_run: dryRun, only_failed: Boolean(options.only_failed) } });
  }
  return api(path("dags", dagId, "clearTaskInstances"), { method: "POST", body: {
    dry_run: dryRun, dag_run_id: runId, reset_dag_runs: true,
    task_ids: [ti.map_index >= 0 ? [ti.task_id, ti.map_index] : ti.task_id],
    include_past: Boolean(options.include_past), include_future: Boolean(options.include_future),
    include_upstream: Boolean(options.include_upstream), include_downstream: Boolean(options.include_downstream),
    only_failed: Boolean(options.only_failed), ...(options.note ? { note: options.note } : {}) } });
}

/** The Clear dialog: options, the list a dry run gives, and Confirm (disabled while the list is empty). */
export function clearDialog({ dagId, runId, ti = null, close, done }) {
  const options = {};
  const list = h("div", { class: "affected", "aria-live": "polite" }, h("p", { class: "muted" }, "Listing…"));
  const confirm = h("button", { type: "submit", class: "primary", disabled: true }, "Confirm clear");
  const note = ti ? h("textarea", { id: "clear-note", rows: 2 }) : null;
  let asked = 0;

  async function dryRun() {
    const mine = ++asked;
    confirm.disabled = true;
    try {
      const { task_instances: tis, total_entries: total } = await clearCall(dagId, runId, ti, options, true);
      if (mine !== asked) return;
      list.replaceChildren(h("p", {}, `${total} task instance${total === 1 ? "" : "s"} will be cleared:`),
        tis.length ? h("div", { class: "scroll" }, table(["DAG", "Run", "Task", "Map index", "State"],
          tis.map((t) => h("tr", {}, [t.dag_id, t.dag_run_id, t.task_id, t.map_index >= 0 ? String(t.map_index) : "",
            badge(t.state)].map((cell) => h("td", {}, cell)))), { class: "list" })) : "");
      confirm.disabled = total === 0;
    } catch (error) {
      if (mine === asked) list.replaceChildren(errorBox(error));
    }
  }

  const choices = ti ? TI_OPTIONS : [["only_failed", "Only failed"]];
  const boxes = h("fieldset", { class: "options" }, h("legend", {}, "Also clear"),
    choices.map(([key, label]) => h("label", {}, h("input", { type: "checkbox", name: key, onchange: (event) => {
      options[key] = event.target.checked;
      dryRun();
    } }), ` ${label}`)));
  const errors = h("div", {});
  const form = h("form", { class: "panel wide", "aria-label": "Clear" },
    h("h2", {}, ti ? `Clear ${ti.task_id}${ti.map_index >= 0 ? ` [${ti.map_index}]` : ""}` : `Clear run ${runId}`),
    boxes, list,
    note ? h("div", { class: "field" }, h("label", { for: "clear-note" }, "Note"), note) : null,
    errors, h("div", { class: "actions" }, confirm, h("button", { type: "button", onclick: close }, "Cancel")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errors.replaceChildren();
    confirm.disabled = true;
    try {
      await clearCall(dagId, runId, ti, { ...options, note: note?.value }, false);
      await done();
    } catch (error) {
      errors.replaceChildren(errorBox(error));
      confirm.disabled = false;
    }
  });
  dryRun();
  return form;
}

// A live page redraws every few seconds: an open dialog or note being edited must survive that. Each control is
// kept by what it acts on and handed back, with what is typed in it, while it is open.
const kept = new Map();

function keptOr(key, make) {
  const open = kept.get(key);
  if (open && open.querySelector("form")) return open;
  const made = make();
  kept.set(key, made);
  return made;
}

/** A Clear… button that opens the dialog under it; null for a VIEWER. ``refresh`` redraws the page after. */
export function clearButton({ dagId, runId, ti = null, refresh }) {
  if (!canEdit()) return null;
  const key = `clear|${dagId}|${runId}|${ti ? `${ti.task_id}|${ti.map_index}` : ""}`;
  const control = keptOr(key, () => {
    const box = h("div", { class: "dialog-host" });
    const close = () => box.replaceChildren();
    const button = withShortcut(h("button", { type: "button", onclick: () => box.replaceChildren(clearDialog({ dagId,
      runId, ti, close, done: async () => { close(); await control.refresh(); } })) }, ti ? "Clear…" : "Clear run…"),
    { keys: "shift+c", category: "runActions", description: ti ? "Clear Task Instance" : "Clear Dag Run" });
    return Object.assign(h("span", { class: "clear-control" }, button, box), { refresh });
  });
  control.refresh = refresh;
  return control;
}

/** The note of a run (``ti`` null) or task instance, rendered as Markdown, with an Edit note button. */
export function noteEditor({ dagId, runId, ti = null, note }) {
  const rel = ti ? path("dags", dagId, "dagRuns", runId, "taskInstances", ti.task_id)
    + (ti.map_index >= 0 ? `/${ti.map_index}` : "") : path("dags", dagId, "dagRuns", runId);
  return keptOr(`note|${rel}`, () => {
    const box = h("div", { class: "note", "aria-label": "Note" });

    function show(text) {
      box.replaceChildren(text ? markdown(text) : h("span", { class: "muted" }, "—"),
        canEdit() ? h("button", { type: "button", class: "link", onclick: () => edit(text) },
          text ? "Edit note" : "Add note") : "");
    }

    function edit(text) {
      const area = h("textarea", { rows: 4, "aria-label": "Note text", maxlength: 1000 }, text || "");
      const errors = h("div", {});
      const form = h("form", { class: "note-form" }, area, errors, h("div", { class: "actions" },
        h("button", { type: "submit", class: "primary" }, "Save note"),
        h("button", { type: "button", onclick: () => show(text) }, "Cancel")));
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        try {
          await api(rel, { method: "PATCH", body: { note: area.value || null }, query: { update_mask: "note" } });
          show(area.value || null);
        } catch (error) {
          errors.replaceChildren(errorBox(error));
        }
      });
      box.replaceChildren(form);
      area.focus();
    }

    show(note);
    return box;
  });
}
