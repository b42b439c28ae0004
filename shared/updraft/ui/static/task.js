// A task instance (/dags/{dag_id}/runs/{run_id}/tasks/{task_id}[/mapped/{map_index}]): each try's log (a running
// try's followed live), its extra links, XComs, why it is not running, rendered template fields, duration,
// executor; its note; clear (options and a dry run first) and mark; its human-in-the-loop request and the form
// that answers it (Airflow's tabs .../required_actions and .../xcom scroll to theirs).

import { api, canEdit, link, path } from "./api.js";
import { logFilter } from "./logview.js";
import { clearButton, noteEditor } from "./runactions.js";
import { actionWithShortcut } from "./shortcuts.js";
import { badge, duration, errorBox, h, json, navLink, table, time } from "./view.js";
import { xcomSection } from "./xcoms.js";

const ACTIVE = new Set(["queued", "running", "scheduled", "up_for_retry", "up_for_reschedule", "deferred",
  "restarting", null]);

function tiActions(dagId, ti, refresh) {
  if (!canEdit()) return null;
  const mark = (state) => api(path("dags", dagId, "dagRuns", ti.dag_run_id, "taskInstances", ti.task_id)
    + (ti.map_index >= 0 ? `/${ti.map_index}` : ""), { method: "PATCH", body: { new_state: state } });
  return h("div", { class: "actions" },
    clearButton({ dagId, runId: ti.dag_run_id, ti, refresh }),
    actionWithShortcut("Mark success", async () => { await mark("success"); await refresh(); }, "shift+s",
      "Mark Task as success"),
    actionWithShortcut("Mark failed", async () => { await mark("failed"); await refresh(); }, "shift+f",
      "Mark Task as failed"));
}

// A long log comes in pages (each answer stays under what API Gateway passes): its continuation token asks for the
// next one, until the token is null (a finished try) or a page adds nothing (a running try's log so far).
const MAX_LOG_PAGES = 40;

async function logOf(dagId, ti, tryNumber) {
  const rel = path("dags", dagId, "dagRuns", ti.dag_run_id, "taskInstances", ti.task_id, "logs", String(tryNumber));
  const lines = [];
  let query = { map_index: ti.map_index, full_content: true };
  for (let page = 0; page < MAX_LOG_PAGES; page += 1) {
    const { content, continuation_token: next } = await api(rel, { query });
    lines.push(...content.map((m) => (typeof m === "string" ? m : m.event)));
    if (!next || !content.length) break;
    query = { map_index: ti.map_index, token: next };
  }
  return lines.join("\n");
}

// A link's URL as Airflow's UI accepts it: http(s), mailto or this site's own; anything else (javascript:, data:)
// is no button. The task stored the URL: it is the DAG author's text, not the UI's.
const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

function safeHref(url) {
  const text = url.trim();
  if (!text) return null;
  let parsed;
  try {
    parsed = new URL(text, location.origin);
  } catch {
    return null;
  }
  return parsed.origin === location.origin || SAFE_PROTOCOLS.has(parsed.protocol) ? text : null;
}

// The task instance's extra links (its operator's, the plugins' global ones; on AWS its try's CloudWatch Logs
// stream) as Airflow's UI shows them: a button each for those with a URL, the site's own opened in place.
async function linksOf(dagId, ti, tryNumber) {
  const { extra_links: links } = await api(path("dags", dagId, "dagRuns", ti.dag_run_id, "taskInstances", ti.task_id,
    "links"), { query: { map_index: ti.map_index, try_number: tryNumber } });
  return Object.entries(links).flatMap(([name, url]) => {
    const href = url === null ? null : safeHref(url);
    if (!href) return [];
    const own = new URL(href, location.origin).origin === location.origin;
    return [h("a", { class: "button", href, target: own ? "_self" : "_blank", rel: "noopener noreferrer" }, name)];
  });
}

async function dependencies(dagId, ti) {
  const rel = path("dags", dagId, "dagRuns", ti.dag_run_id, "taskInstances", ti.task_id)
    + (ti.map_index >= 0 ? `/${ti.map_index}` : "") + "/dependencies";
  const { dependencies: deps } = await api(rel);
  return deps.length ? h("ul", {}, deps.map((d) => h("li", {}, h("strong", {}, d.name), ": ", d.reason)))
    : h("p", { class: "muted" }, "Nothing blocks it.");
}

export async function taskPage(main, [dagId, runId, taskId, mapIndex]) {
  const index = mapIndex === undefined ? -1 : Number(mapIndex);
  const tiPath = path("dags", dagId, "dagRuns", runId, "taskInstances", taskId) + (index >= 0 ? `/${index}` : "");
  const params = new URLSearchParams(location.search);
  let ti;
  let chosenTry = Number(params.get("try_number")) || null;
  const head = h("div", {});
  const tries = h("div", { role: "tablist", "aria-label": "Tries", class: "tries" });
  const logBox = h("pre", { class: "log", "aria-label": "Log", tabindex: "0" });
  const filter = logFilter(logBox, () => `${dagId}__${runId}__${taskId}${index >= 0 ? `__${index}` : ""}`
    + `__try_${chosenTry || ti.try_number}.log`);
  const linkButtons = h("div", { class: "actions" });
  const linkBox = h("section", { class: "extra-links", "aria-label": "Extra links", hidden: true },
    h("h2", {}, "Extra Links"), linkButtons);
  const sideBox = h("div", { class: "side" });
  const actionBox = h("div", {});
  const xcom = xcomSection(dagId);
  // Airflow's tabs of the instance are parts of this page: .../required_actions, .../xcom and
  // .../rendered_templates scroll to theirs.
  const part = { required_actions: "required-action", xcom: "xcoms", rendered_templates: "rendered-templates" }[
    location.pathname.split("/").pop()] || null;

  let unfinished = false; // live while the try (or any mapped instance) is not finished
  let mapped = null; // whether the task is mapped (asked once): a mapped task without an index lists its instances

  async function load() {
    if (mapped === null) mapped = index < 0 && (await api(path("dags", dagId, "tasks", taskId))).is_mapped;
    if (!mapped) return api(tiPath);
    const { task_instances: all } = await api(`${tiPath}/listMapped`, { query: { limit: 100 } });
    main.replaceChildren(
      h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("dags"), "DAGs"), " / ",
        navLink(link("dags", dagId), dagId), " / ", navLink(link("dags", dagId, "runs", runId), runId)),
      h("h1", {}, taskId, h("span", { class: "muted" }, ` — ${all.length} mapped instances`)),
      table(["Map index", "State", "Try", "Duration"], all.map((m) => h("tr", {},
        h("td", {}, navLink(link("dags", dagId, "runs", runId, "tasks", taskId, "mapped", String(m.map_index)),
          `[${m.map_index}]`)),
        h("td", {}, badge(m.state)), h("td", {}, String(m.try_number)), h("td", {}, duration(m.duration))))));
    unfinished = all.some((m) => ACTIVE.has(m.state));
    return null;
  }

  async function drawLog() {
    const shown = chosenTry || ti.try_number;
    tries.replaceChildren(...Array.from({ length: ti.try_number }, (_, i) => i + 1).map((n) =>
      h("button", { type: "button", role: "tab", "aria-selected": String(n === shown),
        onclick: () => { chosenTry = n; drawLog(); } }, `Try ${n}`)));
    if (ti.try_number === 0) {
      filter.show("No try has started yet.");
      linkBox.hidden = true;
      return;
    }
    const [text, links] = await Promise.all([logOf(dagId, ti, shown), linksOf(dagId, ti, shown).catch(() => [])]);
    filter.show(text);
    linkButtons.replaceChildren(...links);
    linkBox.hidden = !links.length;
  }

  async function drawAll(stale = () => false) {
    const loaded = await load();
    if (!loaded || stale()) return;
    ti = loaded;
    unfinished = ACTIVE.has(ti.state);
    head.replaceChildren(
      h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("dags"), "DAGs"), " / ",
        navLink(link("dags", dagId), dagId), " / ", navLink(link("dags", dagId, "runs", runId), runId)),
      h("div", { class: "title" }, h("h1", {}, ti.task_display_name || taskId, index >= 0 ? ` [${index}]` : ""),
        badge(ti.state)),
      h("dl", { class: "facts" },
        h("dt", {}, "Operator"), h("dd", {}, ti.operator_name || ti.operator || "—"),
        h("dt", {}, "Executor"), h("dd", {}, ti.executor || "—"),
        h("dt", {}, "Try"), h("dd", {}, `${ti.try_number} of ${ti.max_tries + 1}`),
        h("dt", {}, "Started"), h("dd", {}, time(ti.start_date)),
        h("dt", {}, "Ended"), h("dd", {}, time(ti.end_date)),
        h("dt", {}, "Duration"), h("dd", {}, duration(ti.duration)),
        h("dt", {}, "Pool"), h("dd", {}, `${ti.pool} (${ti.pool_slots} slot${ti.pool_slots === 1 ? "" : "s"})`),
        h("dt", {}, "Host"), h("dd", {}, ti.hostname || "—"),
        h("dt", {}, "Note"), h("dd", {}, noteEditor({ dagId, runId, ti, note: ti.note }))),
      linkBox,
      tiActions(dagId, ti, () => drawAll()),
      actionBox);
    const [, depPart, actionPart] = await Promise.all([
      xcom.draw(ti), ACTIVE.has(ti.state) ? dependencies(dagId, ti).catch(errorBox) : null,
      import("./hitl.js").then(({ requiredAction }) => requiredAction(dagId, ti, () => drawAll())).catch(errorBox)]);
    if (stale()) return;
    // A form being filled in is not redrawn under the user (the page refreshes while the task waits).
    if (!actionBox.querySelector(".hitl-form") || !actionPart?.querySelector?.(".hitl-form")) {
      actionBox.replaceChildren(actionPart || "");
    }
    sideBox.replaceChildren(
      depPart ? h("section", { "aria-label": "Why it is not running" }, h("h2", {}, "Why is it not running?"), depPart)
        : "",
      xcom.section,
      Object.keys(ti.rendered_fields || {}).length ? h("section", { id: "rendered-templates", "aria-label": "Rendered templates" },
        h("h2", {}, "Rendered templates"), table(["Field", "Value"], Object.entries(ti.rendered_fields).map(
          ([field, value]) => h("tr", {}, h("td", {}, h("code", {}, field)), h("td", {}, json(value)))))) : "");
    await drawLog();
  }

  main.replaceChildren(head, h("div", { class: "columns" },
    h("section", { class: "logs", "aria-label": "Logs" }, h("h2", {}, "Log"), tries, filter.controls, logBox), sideBox));
  try {
    await drawAll();
    if (part) document.getElementById(part)?.scrollIntoView();
  } catch (error) {
    main.replaceChildren(h("h1", {}, taskId), errorBox(error));
    return null;
  }
  // Live while the try is not finished: its state, and its log when the try ends (Updraft writes a try's log whole).
  return { refresh: drawAll, live: () => unfinished };
}
