// The trigger form, built from the DAG's params (JSON Schema: types, enums, defaults, required) plus a logical
// date and an optional run id, as Airflow's; and the backfill form (Airflow's POST /backfills).

import { api, path } from "./api.js";
import { chosenZone, fromWallTime, wallTime, zoneName } from "./timezone.js";
import { dialog, h } from "./view.js";

function types(schema) {
  return [].concat(schema.type ?? []);
}

/** One input per param; read() gives its value or throws naming the param. */
export function paramField(name, param) {
  const schema = param.schema || {};
  const kinds = types(schema);
  const nullable = kinds.includes("null");
  const required = param.value === null && !nullable;
  const id = `param-${name}`;
  let input;
  let read;
  if (Array.isArray(schema.enum)) {
    input = h("select", { id, name, required },
      required ? h("option", { value: "" }, "— choose —") : null,
      schema.enum.map((v) => h("option", { value: JSON.stringify(v), selected: v === param.value },
        v === null ? "null" : String(v))));
    read = () => (input.value === "" ? null : JSON.parse(input.value));
  } else if (kinds.includes("boolean")) {
    input = h("input", { id, name, type: "checkbox", checked: param.value === true });
    read = () => input.checked;
  } else if (kinds.includes("integer") || kinds.includes("number")) {
    input = h("input", { id, name, type: "number", required, step: kinds.includes("integer") ? "1" : "any",
      value: param.value ?? "", min: schema.minimum, max: schema.maximum });
    read = () => (input.value === "" ? null : Number(input.value));
  } else if (kinds.includes("array") || kinds.includes("object")) {
    input = h("textarea", { id, name, required, rows: 3, class: "code" },
      param.value === null ? "" : JSON.stringify(param.value, null, 2));
    read = () => {
      if (input.value.trim() === "") return null;
      try {
        return JSON.parse(input.value);
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    };
  } else {
    input = h("input", { id, name, type: "text", required, value: param.value ?? "",
      minlength: schema.minLength, maxlength: schema.maxLength, placeholder: schema.format || "" });
    read = () => (input.value === "" && nullable ? null : input.value);
  }
  const label = h("label", { for: id }, schema.title || name, required ? h("span", { class: "req" }, " *") : "");
  const help = param.description || schema.description;
  return { row: h("div", { class: "field" }, label, input, help ? h("small", {}, help) : ""), read };
}

// The date fields are typed on the display timezone's clock (the header's choice), as every time shown is.
const localNow = () => wallTime(new Date());
const instant = (value) => fromWallTime(value).toISOString();

export function triggerForm(details, { close, done }) {
  const fields = Object.entries(details.params || {}).map(([name, param]) => [name, paramField(name, param)]);
  const logical = h("input", { id: "logical-date", type: "datetime-local", step: "1", value: localNow() });
  const runId = h("input", { id: "run-id", type: "text", placeholder: "generated when empty" });
  return dialog("Trigger", [
    h("fieldset", {}, h("legend", {}, "Run"),
      h("div", { class: "field" }, h("label", { for: "logical-date" },
        `Logical date (${zoneName(chosenZone())})`), logical),
      h("div", { class: "field" }, h("label", { for: "run-id" }, "Run id"), runId)),
    fields.length ? h("fieldset", {}, h("legend", {}, "Params"), fields.map(([, f]) => f.row)) : null,
  ], async () => {
    const conf = Object.fromEntries(fields.map(([name, f]) => [name, f.read()]));
    const body = { logical_date: logical.value ? instant(logical.value) : null, conf };
    if (runId.value.trim()) body.dag_run_id = runId.value.trim();
    done(await api(path("dags", details.dag_id, "dagRuns"), { method: "POST", body }));
  }, close);
}

export function backfillForm(details, { close }) {
  const from = h("input", { id: "backfill-from", type: "datetime-local", step: "1", required: true });
  const to = h("input", { id: "backfill-to", type: "datetime-local", step: "1", required: true, value: localNow() });
  const reprocess = h("select", { id: "backfill-reprocess" }, ["none", "failed", "completed"].map((v) =>
    h("option", { value: v }, v)));
  const result = h("p", { role: "status" });
  return dialog("Backfill", [
    h("div", { class: "field" }, h("label", { for: "backfill-from" }, `From (${zoneName(chosenZone())})`), from),
    h("div", { class: "field" }, h("label", { for: "backfill-to" }, `To (${zoneName(chosenZone())})`), to),
    h("div", { class: "field" }, h("label", { for: "backfill-reprocess" }, "Reprocess"), reprocess), result,
  ], async () => {
    const made = await api("backfills", { method: "POST", body: { dag_id: details.dag_id,
      from_date: instant(from.value), to_date: instant(to.value),
      reprocess_behavior: reprocess.value } });
    result.textContent = `Backfill ${made.id} created.`;
  }, close);
}
