// An editable list page (Airflow's Variables and Pools pages): the table of a list route, an Add button, and on
// each row Edit and Delete. The form is the same for add and edit; its fields are declared as data, and the id
// field is read-only when editing (Airflow's routes change everything but the key). A refusal of the API (a
// duplicate key, default_pool's deletion) is shown in the form or beside the button that asked, and a row's
// refusal stays beside its button when the page's refresh redraws the table.

import { all, api, canEdit, path } from "./api.js";
import { actionButton, dialog, errorBox, h, table } from "./view.js";

/** One form field: { name, label, kind: "text" | "textarea" | "number" | "checkbox", required, min, fixed
 * (read-only when editing), patchAs (its name in a PATCH body), initial (a new item's), hint }. Returns { row, read } (read() gives the value to send). */
function field(spec, value, editing) {
  const id = `field-${spec.name}`;
  let input;
  if (spec.kind === "textarea") {
    input = h("textarea", { id, rows: 4, class: "code", required: spec.required }, value ?? "");
  } else if (spec.kind === "checkbox") {
    input = h("input", { id, type: "checkbox", checked: Boolean(value) });
  } else {
    input = h("input", { id, type: spec.kind || "text", value: value ?? "", required: spec.required, min: spec.min,
      step: spec.kind === "number" ? 1 : undefined, readonly: editing && spec.fixed, autocomplete: "off" });
  }
  const read = () => {
    if (spec.kind === "checkbox") return input.checked;
    if (spec.kind === "number") return input.value === "" ? null : Number(input.value);
    return input.value === "" && !spec.required ? null : input.value;
  };
  return { row: h("div", { class: "field" }, h("label", { for: id }, spec.label), input,
    spec.hint ? h("small", {}, spec.hint) : null), read, input };
}

/** A page for ``rel`` (e.g. "variables"): ``key`` is the list's array in the answer, ``id`` the item's id field,
 * ``columns`` [header, item => cell], ``fields`` the form's, ``noun`` what one item is called. */
export function editableList({ title, noun, rel, key, id, columns, fields, query = {} }) {
  return async (main) => {
    const formBox = h("div", {});
    const box = h("div", {});
    const refused = new Map(); // item id -> the API's refusal of its deletion, drawn again with the row

    async function remove(item) {
      if (!window.confirm(`Delete ${noun} ${item[id]}?`)) return;
      refused.delete(item[id]);
      try {
        await api(path(rel, item[id]), { method: "DELETE" });
      } catch (error) {
        refused.set(item[id], error); // drawn beside the row's button, this draw and the refreshes after it
      }
      await draw();
    }

    function deleteButton(item) {
      const button = actionButton("Delete", () => remove(item), { "aria-label": `Delete ${item[id]}` });
      if (refused.has(item[id])) button.append(errorBox(refused.get(item[id])));
      return button;
    }

    function openForm(existing) {
      const editing = Boolean(existing);
      const made = fields.map((spec) => [spec, field(spec, existing ? existing[spec.name] : spec.initial, editing)]);
      const form = dialog(editing ? `Edit ${noun} ${existing[id]}` : `Add ${noun}`, made.map(([, f]) => f.row),
        async () => {
          // Editing, a field may go by another name (a pool's "name" is PATCHed as "pool").
          const nameOf = (spec) => (editing && spec.patchAs) || spec.name;
          const body = Object.fromEntries(made.map(([spec, f]) => [nameOf(spec), f.read()]));
          if (editing) {
            const mask = fields.filter((spec) => !spec.fixed).map(nameOf);
            await api(path(rel, existing[id]), { method: "PATCH", body, query: { update_mask: mask } });
          } else {
            await api(rel, { method: "POST", body });
          }
          formBox.replaceChildren();
          await draw();
        }, () => formBox.replaceChildren(), "Save");
      formBox.replaceChildren(form);
      made.find(([spec]) => !(editing && spec.fixed))?.[1].input.focus();
    }

    async function draw() {
      try {
        const items = await all(rel, key, query);
        const headers = [...columns.map(([header]) => header), canEdit() ? "Actions" : null].filter(Boolean);
        box.replaceChildren(items.length ? h("div", { class: "scroll" }, table(headers, items.map((item) =>
          h("tr", { "data-id": item[id] }, columns.map(([, cell]) => h("td", {}, cell(item))),
            canEdit() ? h("td", {}, h("span", { class: "actions" },
              h("button", { type: "button", "aria-label": `Edit ${item[id]}`, onclick: () => openForm(item) }, "Edit"),
              deleteButton(item))) : null)), { class: "list" }))
          : h("p", { class: "muted" }, `No ${title.toLowerCase()}.`));
      } catch (error) {
        box.replaceChildren(errorBox(error));
      }
    }

    main.replaceChildren(h("div", { class: "title" }, h("h1", {}, title),
      canEdit() ? h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", onclick: () => openForm(null) }, `Add ${noun}`)) : null),
    formBox, box);
    await draw();
    return { refresh: async () => {
      if (!formBox.childElementCount) await draw(); // never redraw under a form being filled in
    }, live: () => true };
  };
}
