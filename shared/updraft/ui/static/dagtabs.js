// The DAG's tabs on Airflow 3's paths: /dags/{dag_id} (Overview: the grid and graph), /runs, /tasks, /calendar,
// /backfills, /events (Audit Log), /required_actions (human-in-the-loop requests, drawn by hitl.js), /code, /details. A tab page draws the DAG's header and the tab bar, then its
// own content under them; the tab bar is exported for the DAG page to draw as well.

import { api, link, path } from "./api.js";
import { auditLog } from "./admin.js";
import { errorBox, h, navLink } from "./view.js";

export const TABS = [["", "Overview"], ["runs", "Runs"], ["tasks", "Tasks"], ["calendar", "Calendar"],
  ["backfills", "Backfills"], ["events", "Audit Log"], ["required_actions", "Required Actions"], ["code", "Code"],
  ["details", "Details"]];

/** The tab bar of ``dagId``, ``current`` ("" for Overview) marked as the page shown. */
export function dagTabs(dagId, current) {
  return h("nav", { class: "tabs", "aria-label": "DAG tabs" }, TABS.map(([tab, label]) =>
    h("a", { href: tab ? link("dags", dagId, tab) : link("dags", dagId), "data-nav": true,
      "aria-current": tab === current ? "page" : undefined }, label)));
}

/** A tab's page: ``draw(box, dagId, details)`` fills the box under the header (and may return { refresh, live }). */
export function dagTabPage(tab, draw) {
  return async (main, [dagId]) => {
    const box = h("div", { class: "tab-body" }, h("p", { class: "muted loading" }, "Loading…"));
    let details;
    try {
      details = await api(path("dags", dagId, "details"));
    } catch (error) {
      main.replaceChildren(h("h1", {}, dagId), errorBox(error));
      return null;
    }
    const label = TABS.find(([t]) => t === tab)[1];
    main.replaceChildren(
      h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("dags"), "DAGs"), " / ",
        navLink(link("dags", dagId), dagId), ` / ${label}`),
      h("div", { class: "title" }, h("h1", {}, details.dag_display_name || dagId),
        details.is_paused ? h("span", { class: "tag" }, "paused") : null,
        (details.tags || []).map((t) => h("span", { class: "tag" }, t.name))),
      dagTabs(dagId, tab), box);
    try {
      return (await draw(box, dagId, details)) || null;
    } catch (error) {
      box.replaceChildren(errorBox(error));
      return null;
    }
  };
}

export const auditTab = dagTabPage("events", async (box, dagId) => {
  await auditLog(box, dagId);
  return { refresh: () => auditLog(box, dagId), live: () => true };
});
