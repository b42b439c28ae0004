// The DAG list (/dags): pause switches, schedule and next run, the last runs' states, a tags filter, search,
// and a banner with every import error's text.

import { all, api, canEdit, link, path } from "./api.js";
import { errorBox, h, navLink, stateCell, table, time } from "./view.js";

const LAST_RUNS = 5;

export function pauseSwitch(dag, onChange) {
  const input = h("input", { type: "checkbox", role: "switch", class: "switch", checked: !dag.is_paused,
    disabled: !canEdit(), "aria-label": `${dag.dag_id} is ${dag.is_paused ? "paused" : "active"}`,
    title: dag.is_paused ? "Paused: click to unpause" : "Active: click to pause" });
  input.addEventListener("change", async () => {
    input.disabled = true;
    try {
      const patched = await api(path("dags", dag.dag_id), { method: "PATCH", body: { is_paused: !input.checked } });
      Object.assign(dag, patched);
      input.setAttribute("aria-label", `${dag.dag_id} is ${dag.is_paused ? "paused" : "active"}`);
      input.title = dag.is_paused ? "Paused: click to unpause" : "Active: click to pause";
      onChange?.(patched);
    } catch (error) {
      input.checked = !input.checked;
      input.after(errorBox(error));
    } finally {
      input.disabled = !canEdit();
    }
  });
  return input;
}

async function importErrorsBanner() {
  const { import_errors: errors, total_entries: total } = await api("importErrors", { query: { limit: 100 } });
  if (!total) return null;
  return h("section", { class: "banner", role: "alert", "aria-label": "Import errors" },
    h("strong", {}, `${total} DAG import error${total === 1 ? "" : "s"}`),
    errors.map((e) => h("details", { class: "import-error" }, h("summary", {}, e.filename, " ", time(e.timestamp)),
      h("pre", {}, e.stack_trace))));
}

const UNFINISHED = new Set(["queued", "running"]);

async function lastRuns(dagId, seen) {
  const { dag_runs: runs } = await api(path("dags", dagId, "dagRuns"),
    { query: { limit: LAST_RUNS, order_by: "-run_after" } });
  runs.forEach((run) => seen.push(run.state));
  return h("span", { class: "runs" }, runs.reverse().map((run) => navLink(link("dags", dagId, "runs", run.dag_run_id),
    stateCell(run.state, { label: `run ${run.dag_run_id}` }))));
}

export async function dagsPage(main) {
  const params = new URLSearchParams(location.search);
  const filters = { search: params.get("search") || "", tags: params.getAll("tags"), paused: params.get("paused") || "" };
  const body = h("div", {}, h("p", { class: "loading", role: "status" }, "Loading DAGs…"));
  // The tags filter: a drop-down of checkboxes (any of the ticked tags, as Airflow's), one line when closed.
  const tagsBox = h("fieldset", { "aria-label": "Tags" });
  const tagsSummary = h("summary", {}, "Tags");
  const tagsChoice = h("details", { class: "dropdown" }, tagsSummary, tagsBox);
  const search = h("input", { type: "search", placeholder: "Search DAGs", "aria-label": "Search DAGs",
    value: filters.search });
  const paused = h("select", { "aria-label": "Paused filter" }, h("option", { value: "" }, "All"),
    h("option", { value: "false" }, "Active"), h("option", { value: "true" }, "Paused"));
  paused.value = filters.paused;

  let states = []; // the shown runs' states: the list refreshes itself while one is unfinished, as Airflow's

  async function draw(stale = () => false) {
    const query = { limit: 100, order_by: "dag_id", tags: filters.tags,
      dag_id_pattern: filters.search ? `%${filters.search}%` : undefined, paused: filters.paused || undefined };
    const [banner, dags] = await Promise.all([importErrorsBanner(), all("dags", "dags", query)]);
    const seen = [];
    const runs = await Promise.all(dags.map((d) => lastRuns(d.dag_id, seen)));
    if (stale()) return;
    states = seen;
    const rows = dags.map((dag, i) => h("tr", { "data-dag-id": dag.dag_id },
      h("td", {}, pauseSwitch(dag)),
      h("td", {}, navLink(link("dags", dag.dag_id), dag.dag_display_name || dag.dag_id),
        dag.has_import_errors ? h("span", { class: "warn", title: "Its file has import errors" }, " ⚠") : null),
      h("td", {}, dag.tags.map((t) => h("span", { class: "tag" }, t.name))),
      h("td", { title: dag.timetable_summary || "" }, dag.timetable_description || dag.timetable_summary || "None"),
      h("td", {}, time(dag.next_dagrun_run_after)),
      h("td", {}, runs[i])));
    body.replaceChildren(banner || "",
      dags.length ? table(["Active", "DAG", "Tags", "Schedule", "Next run", "Last runs"], rows, { class: "dags" })
        : h("p", { class: "muted" }, "No DAGs match."));
  }

  function apply() {
    const query = new URLSearchParams();
    if (filters.search) query.set("search", filters.search);
    for (const tag of filters.tags) query.append("tags", tag);
    if (filters.paused) query.set("paused", filters.paused);
    history.replaceState(null, "", link("dags") + (query.toString() ? `?${query}` : ""));
    draw().catch((error) => body.replaceChildren(errorBox(error)));
  }
  search.addEventListener("input", () => { filters.search = search.value.trim(); apply(); });
  paused.addEventListener("change", () => { filters.paused = paused.value; apply(); });
  const showTags = () => { tagsSummary.textContent = filters.tags.length ? `Tags: ${filters.tags.join(", ")}` : "Tags"; };
  tagsBox.addEventListener("change", () => {
    filters.tags = [...tagsBox.querySelectorAll("input:checked")].map((o) => o.value);
    showTags();
    apply();
  });

  main.replaceChildren(h("h1", {}, "DAGs"),
    h("div", { class: "filters" }, search, h("label", {}, "State ", paused), tagsChoice),
    body);
  try {
    const { tags } = await api("dagTags", { query: { limit: 100 } });
    tagsBox.replaceChildren(...tags.map((t) => h("label", {}, h("input", { type: "checkbox", name: "tags", value: t,
      checked: filters.tags.includes(t) }), t)));
    showTags();
    await draw();
  } catch (error) {
    body.replaceChildren(errorBox(error));
  }
  return { refresh: draw, live: () => states.some((s) => UNFINISHED.has(s)) };
}
