// Human-in-the-loop requests (Airflow's "Required Actions"): Browse > Required Actions (/required_actions), every
// request of every DAG, 50 a page, pending or answered (Airflow's ?response_received=false|true in the URL), and
// the same list of one DAG (its Required Actions tab) and of one run (/dags/{dag_id}/runs/{run_id}/...); and
// the form that answers one, on its task instance's page (/dags/.../tasks/{task_id}/required_actions opens it).
// Both read Airflow's hitlDetails routes; the answer is their PATCH, which resumes the waiting task.

import { api, canEdit, link, path } from "./api.js";
import { pageQuery, pager } from "./dagruns.js";
import { dagTabPage } from "./dagtabs.js";
import { markdown } from "./markdown.js";
import { paramField } from "./trigger.js";
import { badge, dialog, errorBox, h, json, navLink, table, time } from "./view.js";

/** The task instance page's URL of a request's instance, with its Required Actions part. */
export function requestHref(ti) {
  return link("dags", ti.dag_id, "runs", ti.dag_run_id, "tasks", ti.task_id,
    ...(ti.map_index >= 0 ? ["mapped", String(ti.map_index)] : []), "required_actions");
}

// Airflow's required-action state: what the request asks, and whether it was answered.
function actionState(detail) {
  const approval = detail.options.length === 2 && detail.options.includes("Approve") && detail.options.includes("Reject");
  if (detail.response_received) {
    if (approval) return detail.chosen_options?.includes("Approve") ? "Approval Received" : "Rejection Received";
    return detail.options.length > 1 ? "Choice Received" : "Response Received";
  }
  if (["success", "failed", "skipped", "upstream_failed", "removed"].includes(detail.task_instance.state)) {
    return "No Response Received";
  }
  return approval ? "Approval Required" : detail.options.length > 1 ? "Choice Required" : "Response Required";
}

const RESPONSES = [["", "All"], ["false", "Pending"], ["true", "Reviewed"]];

/** Airflow's Response filter: All, Pending (?response_received=false), Reviewed (true), kept in the URL. */
function responseFilter(onchange) {
  const chosen = new URLSearchParams(location.search).get("response_received") || "";
  return h("label", { class: "filter" }, "Response ", h("select", { name: "response_received", onchange: (event) => {
    const next = new URLSearchParams(location.search);
    if (event.target.value) next.set("response_received", event.target.value);
    else next.delete("response_received");
    next.delete("offset");
    history.replaceState(null, "", `${location.pathname}${next.size ? `?${next}` : ""}`);
    onchange();
  } }, RESPONSES.map(([value, label]) => h("option", { value, selected: value === chosen }, label))));
}

// The columns, as Airflow's: a DAG's list leaves out the DAG, a run's the run and its date too.
function detailsTable(details, { dagId, runId }) {
  const columns = [
    ["State", (d) => h("span", {}, badge(d.task_instance.state), " ", actionState(d))],
    ["Subject", (d) => navLink(requestHref(d.task_instance), h("strong", {}, d.subject))],
    dagId === "~" ? ["DAG", (d) => navLink(link("dags", d.task_instance.dag_id),
      d.task_instance.dag_display_name || d.task_instance.dag_id)] : null,
    runId === "~" ? ["Run", (d) => navLink(link("dags", d.task_instance.dag_id, "runs", d.task_instance.dag_run_id),
      d.task_instance.dag_run_id)] : null,
    runId === "~" ? ["Run after", (d) => time(d.task_instance.run_after)] : null,
    ["Task", (d) => navLink(requestHref(d.task_instance), d.task_instance.task_display_name || d.task_instance.task_id)],
    ["Map index", (d) => d.task_instance.rendered_map_index ?? ""],
    ["Created", (d) => time(d.created_at)],
    ["Responded by", (d) => d.responded_by_user?.name ?? ""],
    ["Response received", (d) => time(d.responded_at)],
  ].filter(Boolean);
  return h("div", { class: "scroll" }, table(columns.map(([title]) => title), details.map((d) =>
    h("tr", { "data-task-id": d.task_instance.task_id }, columns.map(([title, cell]) =>
      h("td", { class: title === "Subject" ? "subject" : undefined }, cell(d))))), { class: "list requests" }));
}

/** The requests of ``dagId``'s runs (of ``runId``'s when given; of every DAG without either) into ``box``: the
 * Response filter and a page of them. Returns the page's { refresh, live }. */
async function requestList(box, { dagId = "~", runId = "~" } = {}) {
  const list = h("div", {}, h("p", { class: "muted loading" }, "Loading…"));
  async function draw() {
    try {
      const received = new URLSearchParams(location.search).get("response_received");
      const page = await api(path("dags", dagId, "dagRuns", runId, "hitlDetails"), { query: { ...pageQuery(),
        order_by: "-created_at", response_received: received } });
      list.replaceChildren(page.hitl_details.length ? detailsTable(page.hitl_details, { dagId, runId })
        : h("p", { class: "muted" }, "No required actions."), pager(page.total_entries, draw));
    } catch (error) {
      list.replaceChildren(errorBox(error));
    }
  }
  box.replaceChildren(h("div", { class: "filters" }, responseFilter(draw)), list);
  await draw();
  return { refresh: draw, live: () => true };
}

/** Browse > Required Actions: every DAG's. */
export async function requiredActionsPage(main) {
  const box = h("div", {});
  main.replaceChildren(h("h1", {}, "Required Actions"), box);
  return requestList(box);
}

/** A DAG's Required Actions tab. */
export const dagRequiredActions = dagTabPage("required_actions", (box, dagId) => requestList(box, { dagId }));

/** A run's required actions (/dags/{dag_id}/runs/{run_id}/required_actions). */
export async function runRequiredActions(main, [dagId, runId]) {
  const box = h("div", {});
  main.replaceChildren(h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("dags"), "DAGs"),
    " / ", navLink(link("dags", dagId), dagId), " / ", navLink(link("dags", dagId, "runs", runId), runId)),
  h("h1", {}, "Required Actions"), box);
  return requestList(box, { dagId, runId });
}

// The options to choose from: a button each when one option answers and there is nothing to fill in (Airflow's
// Approve / Reject); else radio buttons (or check boxes when ``multiple``), the defaults chosen, and Respond.
function responseForm(detail, tiPath, done) {
  const params = Object.entries(detail.params || {}).map(([name, param]) => [name, paramField(name, param)]);
  const send = async (chosen) => {
    const params_input = Object.fromEntries(params.map(([name, f]) => [name, f.read()]));
    await api(`${tiPath}/hitlDetails`, { method: "PATCH", body: { chosen_options: chosen, params_input } });
    await done();
  };
  const subject = h("h3", {}, detail.subject);
  const body = detail.body ? markdown(detail.body) : null;
  if (!detail.multiple && !params.length && detail.options.length) {
    const errors = h("div", {});
    return h("div", { class: "panel hitl-form", "aria-label": "Respond" }, subject, body,
      h("p", { class: "muted" }, "Choose your options for this task instance"),
      h("div", { class: "actions" }, detail.options.map((option) => h("button", { type: "button",
        class: (detail.defaults || []).includes(option) ? "primary" : undefined, onclick: async (event) => {
          event.target.disabled = true;
          errors.replaceChildren();
          try {
            await send([option]);
          } catch (error) {
            errors.replaceChildren(errorBox(error));
            event.target.disabled = false;
          }
        } }, option))), errors);
  }
  const kind = detail.multiple ? "checkbox" : "radio";
  const choices = detail.options.map((option, i) => h("label", { class: "choice" }, h("input", { type: kind,
    name: "hitl-option", value: option, id: `hitl-option-${i}`, checked: (detail.defaults || []).includes(option) }),
  ` ${option}`));
  const form = dialog(`Respond: ${detail.subject}`, [body,
    h("fieldset", {}, h("legend", {}, "Options"), choices),
    params.length ? h("fieldset", {}, h("legend", {}, "Params"), params.map(([, f]) => f.row)) : null,
  ], async () => {
    const chosen = [...form.querySelectorAll("input[name=hitl-option]:checked")].map((input) => input.value);
    if (!chosen.length) throw new Error("Choose an option");
    await send(chosen);
  }, null, "Respond");
  form.querySelector("button[type=button]").remove(); // the form stays on the page: nothing to cancel
  form.classList.add("hitl-form");
  return form;
}

function answered(detail) {
  return h("div", { class: "panel hitl-answer" }, h("h3", {}, detail.subject),
    detail.body ? markdown(detail.body) : null,
    h("dl", { class: "facts" },
      h("dt", {}, "Chosen"), h("dd", {}, (detail.chosen_options || []).join(", ")),
      Object.keys(detail.params_input || {}).length ? [h("dt", {}, "Params"), h("dd", {}, json(detail.params_input))]
        : null,
      h("dt", {}, "Responded by"), h("dd", {}, detail.responded_by_user?.name || "—"),
      h("dt", {}, "Response received at"), h("dd", {}, time(detail.responded_at)),
      h("dt", {}, "Response created at"), h("dd", {}, time(detail.created_at))));
}

/** The task instance's request, if it has one: the form while it waits for an answer (to whoever may change
 * things), else what was answered (or that none came). Null when the instance asks nothing. */
export async function requiredAction(dagId, ti, done) {
  const tiPath = path("dags", dagId, "dagRuns", ti.dag_run_id, "taskInstances", ti.task_id)
    + `/${ti.map_index}`;
  const { hitl_details: found } = await api(path("dags", dagId, "dagRuns", ti.dag_run_id, "hitlDetails"),
    { query: { task_id: ti.task_id, map_index: ti.map_index } });
  const detail = found[0];
  if (!detail) return null;
  const open = !detail.response_received && !["success", "failed", "skipped", "upstream_failed", "removed"]
    .includes(ti.state);
  return h("section", { id: "required-action", "aria-label": "Required action" },
    h("h2", {}, "Required Action ", h("span", { class: "muted" }, actionState(detail))),
    detail.response_received ? answered(detail)
      : open && canEdit() ? responseForm(detail, tiPath, done)
        : h("div", { class: "panel" }, h("h3", {}, detail.subject), detail.body ? markdown(detail.body) : null,
          h("p", { class: "muted" }, open ? "Waiting for a response." : "No response was received.")));
}
