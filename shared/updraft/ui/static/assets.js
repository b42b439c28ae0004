// Assets (/assets) and one asset (/assets/{asset_id}), as Airflow's pages: the list with what produces and what
// is scheduled on each, and the asset's lineage (producing tasks -> the asset -> the DAGs it schedules) with its
// latest events, each event linking to the run that made it.

import { api, link, path } from "./api.js";
import { pageQuery, pager } from "./dagruns.js";
import { errorBox, h, json, navLink, table, time } from "./view.js";

const producers = (a) => a.producing_tasks.map((t) => navLink(link("dags", t.dag_id, "tasks", t.task_id),
  `${t.dag_id}.${t.task_id}`));
const consumers = (a) => a.scheduled_dags.map((d) => navLink(link("dags", d.dag_id), d.dag_id));
const joined = (nodes) => nodes.flatMap((node, i) => (i ? [", ", node] : [node]));

export async function assetsPage(main) {
  const list = h("div", {}, h("p", { class: "muted loading" }, "Loading…"));
  async function draw() {
    const page = await api("assets", { query: { ...pageQuery(), order_by: "name" } });
    list.replaceChildren(page.assets.length ? h("div", { class: "scroll" }, table(["Name", "URI", "Group",
      "Produced by", "Schedules", "Last event"], page.assets.map((a) => h("tr", { "data-asset-id": a.id }, [
      navLink(link("assets", String(a.id)), a.name), h("code", {}, a.uri), a.group, joined(producers(a)),
      joined(consumers(a)), a.last_asset_event ? time(a.last_asset_event.timestamp) : "—"]
      .map((cell) => h("td", {}, cell)))), { class: "list" })) : h("p", { class: "muted" }, "No assets."),
    pager(page.total_entries, draw));
  }
  main.replaceChildren(h("h1", {}, "Assets"), list);
  try {
    await draw();
  } catch (error) {
    list.replaceChildren(errorBox(error));
  }
  return { refresh: draw, live: () => false };
}

function lineage(asset) {
  const column = (title, nodes) => h("div", { class: "lineage-col" }, h("h3", {}, title),
    nodes.length ? h("ul", {}, nodes.map((node) => h("li", { class: "node" }, node)))
      : h("p", { class: "muted" }, "none"));
  return h("section", { class: "lineage", "aria-label": "Lineage" },
    column("Produced by", producers(asset)), h("div", { class: "arrow", "aria-hidden": "true" }, "→"),
    column("Asset", [h("strong", {}, asset.name)]), h("div", { class: "arrow", "aria-hidden": "true" }, "→"),
    column("Schedules", consumers(asset)));
}

export async function assetPage(main, [assetId]) {
  const events = h("div", {});
  let asset;
  try {
    asset = await api(path("assets", assetId));
  } catch (error) {
    main.replaceChildren(h("h1", {}, `Asset ${assetId}`), errorBox(error));
    return null;
  }
  async function draw() {
    const { asset_events: found } = await api("assets/events", { query: { asset_id: assetId, limit: 50,
      order_by: "-timestamp" } });
    events.replaceChildren(found.length ? h("div", { class: "scroll" }, table(["When", "Source", "Extra"],
      found.map((e) => h("tr", {}, [time(e.timestamp), e.source_dag_id
        ? navLink(link("dags", e.source_dag_id, "runs", e.source_run_id), `${e.source_dag_id}.${e.source_task_id}`)
        : "API", Object.keys(e.extra || {}).length ? json(e.extra) : ""].map((cell) => h("td", {}, cell)))),
    { class: "list" })) : h("p", { class: "muted" }, "No events yet."));
  }
  main.replaceChildren(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, navLink(link("assets"), "Assets"), ` / ${asset.name}`),
    h("h1", {}, asset.name), h("p", { class: "muted" }, h("code", {}, asset.uri), ` · group ${asset.group}`),
    lineage(asset), h("h2", {}, "Events"), events);
  await draw();
  return { refresh: draw, live: () => true };
}
