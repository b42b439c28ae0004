// A task instance's XComs on its page, as Airflow 3's XCom tab: each key with its readable value (Airflow's
// deserialize=true), and for whoever may change things Add, Edit and Delete (Airflow's POST, PATCH and DELETE of
// xcomEntries). A value is typed as JSON; Edit starts from the value as stored (a tagged one shows its tags, which
// the API refuses to take back, as Airflow's does). The section stays put while the page refreshes, so a form
// being filled in is never redrawn.

import { all, api, canEdit, path } from "./api.js";
import { actionButton, dialog, errorBox, h, json, table } from "./view.js";

function tooLarge(error) {
  const detail = error.status === 413 && error.detail && typeof error.detail === "object" ? error.detail : null;
  if (!detail) return errorBox(error);
  return h("p", { class: "muted" }, detail.message,
    detail.download_url ? [" ", h("a", { href: detail.download_url, rel: "noopener noreferrer" }, "Download")] : null);
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error("Value: not valid JSON");
  }
}

/** The section, and draw(ti) to (re)draw its list for the instance as last read. */
export function xcomSection(dagId) {
  let ti = null;
  const formBox = h("div", {});
  const list = h("div", {});
  const base = () => path("dags", dagId, "dagRuns", ti.dag_run_id, "taskInstances", ti.task_id, "xcomEntries");

  function openForm(existing) {
    const key = h("input", { id: "xcom-key", type: "text", required: true, autocomplete: "off",
      value: existing ? existing.key : "", readonly: Boolean(existing) });
    const value = h("textarea", { id: "xcom-value", rows: 5, class: "code", required: true },
      existing ? JSON.stringify(existing.value, null, 2) : "");
    const close = () => formBox.replaceChildren();
    formBox.replaceChildren(dialog(existing ? `Edit XCom ${existing.key}` : "Add XCom", [
      h("div", { class: "field" }, h("label", { for: "xcom-key" }, "Key"), key),
      h("div", { class: "field" }, h("label", { for: "xcom-value" }, "Value (JSON)"), value),
    ], async () => {
      const body = { value: parsed(value.value), map_index: ti.map_index };
      if (existing) await api(`${base()}/${encodeURIComponent(existing.key)}`, { method: "PATCH", body });
      else await api(base(), { method: "POST", body: { key: key.value, ...body } });
      close();
      await draw(ti);
    }, close, "Save"));
    (existing ? value : key).focus();
  }

  async function edit(key) {
    const stored = await api(`${base()}/${encodeURIComponent(key)}`, { query: { map_index: ti.map_index } });
    openForm(stored);
  }

  async function draw(current) {
    ti = current;
    try {
      const entries = await all(base(), "xcom_entries", { map_index: ti.map_index });
      // A value too large for an answer is a 413 whose detail says so (and links to it when it is in S3).
      const values = await Promise.all(entries.map((e) => api(`${base()}/${encodeURIComponent(e.key)}`,
        { query: { map_index: ti.map_index, deserialize: true, stringify: false } }).catch((error) => ({ error }))));
      list.replaceChildren(entries.length ? h("div", { class: "scroll" }, table(["Key", "Value",
        canEdit() ? "" : null].filter((x) => x !== null), entries.map((e, i) => h("tr", { "data-key": e.key },
        h("td", {}, h("code", {}, e.key)),
        h("td", {}, values[i].error ? tooLarge(values[i].error) : json(values[i].value)),
        canEdit() ? h("td", {}, h("span", { class: "actions" },
          actionButton("Edit", () => edit(e.key), { "aria-label": `Edit ${e.key}` }),
          actionButton("Delete", async () => {
            if (!window.confirm(`Delete XCom ${e.key}? This cannot be undone.`)) return;
            await api(`${base()}/${encodeURIComponent(e.key)}`, { method: "DELETE",
              query: { map_index: ti.map_index } });
            await draw(ti);
          }, { "aria-label": `Delete ${e.key}` }))) : null)), { class: "list" }))
        : h("p", { class: "muted" }, "No XComs."));
    } catch (error) {
      list.replaceChildren(errorBox(error));
    }
  }

  const section = h("section", { id: "xcoms", "aria-label": "XComs" },
    h("div", { class: "title" }, h("h2", {}, "XComs"), canEdit() ? h("button", { type: "button",
      onclick: () => openForm(null) }, "Add XCom") : null),
    formBox, list);
  return { section, draw };
}
