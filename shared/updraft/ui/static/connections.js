// Connections (/connections): the list, and the form that adds, edits and deletes one. The form is drawn from
// GET connections/hook_meta (the types Updraft and the environment's installed providers declare) as Airflow's
// is: a type picker, the standard fields with the type's labels, placeholders and hidden fields, the provider's
// own fields (its conn-fields, kept in extra under their names), and the rest of extra as JSON.

import { all, api, canEdit, path } from "./api.js";
import { actionButton, dialog, errorBox, h, table } from "./view.js";

// The standard fields in Airflow's order: [request body key, hook_meta standard_fields key, label, input kind].
const STANDARD = [
  ["description", "description", "Description", "textarea"],
  ["host", "host", "Host", "text"],
  ["schema", "url_schema", "Schema", "text"],
  ["login", "login", "Login", "text"],
  ["password", "password", "Password", "password"],
  ["port", "port", "Port", "number"],
];

// What a type means here that Airflow's form cannot say: Updraft gives DAG code its AWS credentials.
const HINTS = {
  aws: "Leave both keys empty to use the environment's DAG-code role: the task's boto3 default credentials, as "
    + "Airflow's AWS hook falls back to them (so does a missing aws_default).",
};

function kindsOf(schema) {
  return [].concat(schema.type ?? "string");
}

/** One provider field: its row and read(), which gives the value to keep in extra (null: leave the key out). */
function extraField(name, spec, stored) {
  const schema = spec.schema || {};
  const kinds = kindsOf(schema);
  const start = stored !== undefined ? stored : spec.value;
  const id = `conn-extra-${name}`;
  let input;
  let read;
  if (Array.isArray(schema.enum)) {
    input = h("select", { id, name },
      h("option", { value: "" }, "—"),
      schema.enum.map((v) => h("option", { value: JSON.stringify(v), selected: v === start }, String(v))));
    read = () => (input.value === "" ? null : JSON.parse(input.value));
  } else if (kinds.includes("boolean")) {
    input = h("input", { id, name, type: "checkbox", checked: start === true });
    read = () => (input.checked ? true : typeof start === "boolean" ? false : null);
  } else if (kinds.includes("integer") || kinds.includes("number")) {
    input = h("input", { id, name, type: "number", step: kinds.includes("integer") ? "1" : "any",
      value: start ?? "" });
    read = () => (input.value === "" ? null : Number(input.value));
  } else if (kinds.includes("array") || kinds.includes("object")) {
    input = h("textarea", { id, name, rows: 3, class: "code" }, start == null ? "" : JSON.stringify(start, null, 2));
    read = () => {
      if (input.value.trim() === "") return null;
      try {
        return JSON.parse(input.value);
      } catch {
        throw new Error(`${schema.title || name}: not valid JSON`);
      }
    };
  } else {
    input = h("input", { id, name, type: schema.format === "password" ? "password" : "text", value: start ?? "",
      autocomplete: schema.format === "password" ? "new-password" : "off" });
    read = () => (input.value === "" ? null : input.value);
  }
  const label = h("label", { for: id }, schema.title || name);
  return { row: h("div", { class: "field" }, label, input, spec.description ? h("small", {}, spec.description) : ""),
    read };
}

function parseExtra(text) {
  if (!text || !text.trim()) return {};
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error("Extra Fields JSON: not valid JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error("Extra Fields JSON: must be a JSON object");
  }
  return value;
}

/** The add or edit form; ``existing`` is the connection as the API answers it (password and secrets masked). */
function connectionForm(types, existing, { close, done }) {
  const editing = Boolean(existing);
  const byType = new Map(types.map((t) => [t.connection_type, t]));
  if (editing && existing.conn_type && !byType.has(existing.conn_type)) {
    byType.set(existing.conn_type, { connection_type: existing.conn_type, standard_fields: null, extra_fields: null,
      hook_name: `${existing.conn_type} (no installed provider declares it)` });
  }
  const sorted = [...byType.values()].sort((a, b) => a.hook_name.localeCompare(b.hook_name));
  const connId = h("input", { id: "conn-id", type: "text", required: true, pattern: "[\\w.\\-]+", maxlength: 200,
    value: existing?.connection_id ?? "", readonly: editing, autocomplete: "off" });
  const typePicker = h("select", { id: "conn-type", required: true },
    editing ? null : h("option", { value: "" }, "— choose a type —"),
    sorted.map((t) => h("option", { value: t.connection_type, selected: t.connection_type === existing?.conn_type },
      t.hook_name)));
  const standardBox = h("div", {});
  const extraBox = h("div", {});
  const extraJson = h("textarea", { id: "conn-extra", rows: 4, class: "code" });
  // What the user has typed so far, kept when the type changes (a field hidden by one type shows again by another).
  const values = Object.fromEntries(STANDARD.map(([key]) => [key, key === "password" ? "" : existing?.[key] ?? ""]));
  let standard = []; // [key, input] of the fields shown
  let extras = []; // [name, field] of the type's provider fields
  let extra = {};
  try {
    extra = parseExtra(existing?.extra);
  } catch {
    extra = {}; // the API never answers an extra that is not an object
  }

  function collect() {
    for (const [key, input] of standard) values[key] = input.value;
    const out = parseExtra(extraJson.value);
    for (const [name, field] of extras) {
      const value = field.read();
      if (value === null) delete out[name];
      else out[name] = value;
    }
    return out;
  }

  function draw() {
    const meta = byType.get(typePicker.value);
    const fields = (meta && meta.standard_fields) || {};
    standard = [];
    standardBox.replaceChildren(...[HINTS[typePicker.value] ? h("p", { class: "hint" }, HINTS[typePicker.value]) : null,
      ...STANDARD.map(([key, metaKey, label, kind]) => {
      const behaviour = fields[metaKey] || {};
      if (behaviour.hidden) return null;
      const id = `conn-${key}`;
      const attrs = { id, placeholder: behaviour.placeholder || (editing && key === "password"
        ? "unchanged (type a new one to replace it)" : undefined) };
      const input = kind === "textarea" ? h("textarea", { ...attrs, rows: 2 }, values[key])
        : h("input", { ...attrs, type: kind, value: values[key], autocomplete: kind === "password" ? "new-password" : "off",
          ...(kind === "number" ? { min: 0, max: 65535, step: 1 } : {}) });
      standard.push([key, input]);
      return h("div", { class: "field" }, h("label", { for: id }, behaviour.title || label), input);
    })].filter(Boolean));
    const specs = Object.entries((meta && meta.extra_fields) || {});
    extras = specs.map(([name, spec]) => [name, extraField(name, spec, extra[name])]);
    extraBox.replaceChildren(extras.length ? h("fieldset", {}, h("legend", {}, `${meta.hook_name} fields`),
      extras.map(([, f]) => f.row)) : "");
    const rest = Object.fromEntries(Object.entries(extra).filter(([name]) => !specs.some(([n]) => n === name)));
    extraJson.value = Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "";
  }

  typePicker.addEventListener("change", () => {
    try {
      extra = collect(); // the old type's fields go back into extra, the new type's take theirs from it
    } catch {
      // an unreadable JSON stays as typed: the new type's fields start from what was stored
    }
    draw();
  });
  draw();

  const title = editing ? `Edit connection ${existing.connection_id}` : "Add connection";
  return dialog(title, [
    h("div", { class: "field" }, h("label", { for: "conn-id" }, "Connection ID"), connId),
    h("div", { class: "field" }, h("label", { for: "conn-type" }, "Connection Type"), typePicker),
    standardBox, extraBox,
    h("div", { class: "field" }, h("label", { for: "conn-extra" }, "Extra Fields JSON"), extraJson),
  ], async () => {
    const merged = collect();
    const body = { connection_id: connId.value, conn_type: typePicker.value };
    for (const [key, input] of standard) {
      if (key === "port") body.port = input.value === "" ? null : Number(input.value);
      else body[key] = input.value === "" ? null : input.value;
    }
    body.extra = Object.keys(merged).length ? JSON.stringify(merged) : null;
    if (editing) {
      // Only the fields shown are changed; an empty password keeps the stored one, as does a masked extra value.
      if (body.password === null) delete body.password;
      const mask = Object.keys(body).filter((k) => k !== "connection_id");
      done(await api(path("connections", existing.connection_id), { method: "PATCH", body, query: { update_mask: mask } }));
    } else {
      done(await api("connections", { method: "POST", body }));
    }
  }, close, "Save");
}

export async function connectionsPage(main) {
  const formBox = h("div", {});
  const box = h("div", {});
  let types = null;
  async function openForm(existing) {
    try {
      types = types || await api("connections/hook_meta");
    } catch (error) {
      formBox.replaceChildren(errorBox(error));
      return;
    }
    formBox.replaceChildren(connectionForm(types, existing, {
      close: () => formBox.replaceChildren(),
      done: async () => {
        formBox.replaceChildren();
        await draw();
      },
    }));
    formBox.querySelector(existing ? "#conn-type" : "#conn-id").focus();
  }
  async function draw() {
    try {
      const items = await all("connections", "connections");
      const headers = ["Connection", "Type", "Host", "Login", "Port", "Description", canEdit() ? "Actions" : null];
      box.replaceChildren(items.length ? h("div", { class: "scroll" }, table(headers.filter(Boolean), items.map((c) =>
        h("tr", { "data-conn-id": c.connection_id },
          [h("code", {}, c.connection_id), c.conn_type, c.host || "", c.login || "", c.port ?? "", c.description || "",
            canEdit() ? h("span", { class: "actions" },
              h("button", { type: "button", "aria-label": `Edit ${c.connection_id}`, onclick: () => openForm(c) }, "Edit"),
              actionButton("Delete", async () => {
                if (!window.confirm(`Delete connection ${c.connection_id}?`)) return;
                await api(path("connections", c.connection_id), { method: "DELETE" });
                await draw();
              }, { "aria-label": `Delete ${c.connection_id}` })) : null,
          ].filter((cell) => cell !== null).map((cell) => h("td", {}, cell))))))
        : h("p", { class: "muted" }, "No connections."));
    } catch (error) {
      box.replaceChildren(errorBox(error));
    }
  }
  main.replaceChildren(h("div", { class: "title" }, h("h1", {}, "Connections"),
    canEdit() ? h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", onclick: () => openForm(null) }, "Add connection")) : null),
  formBox, box);
  await draw();
  return { refresh: async () => {
    if (!formBox.childElementCount) await draw(); // never redraw under a form being filled in
  }, live: () => false };
}
