// The environment's own pages, on Airflow 3's paths: Admin > Config (/configs, GET config), Admin > Plugins
// (/plugins, GET plugins and plugins/importErrors) and Browse > Jobs (/jobs). Each shows what the API answers and,
// where Updraft differs from Airflow, says how in one sentence instead of showing an empty table without a reason.

import { api, all } from "./api.js";
import { errorBox, h, table, time } from "./view.js";

function page(main, title, intro) {
  const box = h("div", {}, h("p", { class: "muted loading" }, "Loading…"));
  main.replaceChildren(h("h1", {}, title), intro || "", box);
  return box;
}

/** Admin > Config: every option by section, as Airflow's page lists them; Airflow's 403 (expose_config off) is
 * shown as Airflow's UI shows it, its message, with the setting that changes it. */
export async function configPage(main) {
  const box = page(main, "Airflow Configuration", h("p", { class: "muted" }, "The Airflow options this " +
    "environment's settings stand for (Updraft has no airflow.cfg); sensitive values are hidden."));
  try {
    const { sections } = await api("config");
    const rows = sections.flatMap((s) => s.options.map((o) => h("tr", {}, h("td", {}, s.name),
      h("td", {}, h("code", {}, o.key)), h("td", { class: "value" }, [].concat(o.value).join(" ")))));
    box.replaceChildren(h("div", { class: "scroll" }, table(["Section", "Key", "Value"], rows,
      { class: "list config" })));
  } catch (error) {
    box.replaceChildren(errorBox(error), error.status === 403 ? h("p", { class: "hint" },
      "Set Airflow's ", h("code", {}, "[api] expose_config"), " to show it: ",
      h("code", {}, "AIRFLOW__API__EXPOSE_CONFIG=True"), " for local mode, ",
      h("code", {}, "expose_config=True"), " in the environment's settings (infra/config.py) on AWS.") : "");
  }
  return null;
}

// What Airflow runs as a job, and what stands for it in Updraft (GET monitor/health's heartbeats).
const COMPONENTS = [
  ["SchedulerJob", "scheduler", "latest_scheduler_heartbeat",
    "the scheduler Lambda function, invoked every tick"],
  ["DagProcessorJob", "dag_processor", "latest_dag_processor_heartbeat",
    "the parser Lambda function, invoked when a DAG file is uploaded"],
  ["TriggererJob", "triggerer", "latest_triggerer_heartbeat",
    "none: a deferred task waits in a Step Functions execution"],
];

/** Browse > Jobs: Updraft runs no long-lived scheduler, DAG processor or triggerer, so it has no jobs (no ids,
 * hosts or start times) to list; each function's latest heartbeat is shown in their place, and the page says so. */
export async function jobsPage(main) {
  const box = page(main, "Jobs", h("p", { class: "hint", role: "note" }, "Updraft keeps no jobs: its scheduler " +
    "and DAG processor are Lambda functions invoked on demand, not long-running processes with a job id, a host " +
    "and a start time, and it has no triggerer. Each function records its latest heartbeat, shown below in place " +
    "of Airflow's job rows."));
  async function draw() {
    try {
      const health = await api("monitor/health");
      box.replaceChildren(h("div", { class: "scroll" }, table(["Job Type", "State", "Latest Heartbeat",
        "Runs as"], COMPONENTS.map(([type, name, beat, runsAs]) => {
        const part = health[name] || {};
        return h("tr", { "data-job-type": type }, h("td", {}, type),
          h("td", {}, h("span", { class: `health-dot ${part.status || "unknown"}`, "aria-hidden": "true" }), " ",
            part.status || "not running"),
          h("td", {}, time(part[beat])), h("td", {}, runsAs));
      }), { class: "list jobs" })));
    } catch (error) {
      box.replaceChildren(errorBox(error));
    }
  }
  await draw();
  return { refresh: draw, live: () => true };
}

// What a plugin provides that Updraft uses (AirflowPlugin's docstring), and what it may declare that Updraft
// does not serve (web views and apps, listeners): shown as declared, and said to be unused.
const PLUGIN_PARTS = [["macros", "Macros"], ["timetables", "Timetables"], ["operator_extra_links", "Operator links"],
  ["global_operator_extra_links", "Global links"]];
const UNUSED_PARTS = [["listeners", "listeners"], ["external_views", "external views"], ["react_apps", "React apps"],
  ["fastapi_apps", "FastAPI apps"], ["fastapi_root_middlewares", "FastAPI middlewares"],
  ["flask_blueprints", "Flask blueprints"], ["appbuilder_views", "AppBuilder views"]];

function provides(plugin) {
  const used = PLUGIN_PARTS.filter(([key]) => (plugin[key] || []).length).map(([key, label]) =>
    h("div", {}, `${label}: `, plugin[key].map((item, i) => [i ? ", " : "", h("code", {}, item)])));
  const unused = UNUSED_PARTS.filter(([key]) => (plugin[key] || []).length)
    .map(([key, label]) => `${plugin[key].length} ${label}`);
  return [used, unused.length ? h("div", { class: "muted" }, `Not used by Updraft: ${unused.join(", ")}`) : ""];
}

/** Admin > Plugins: the plugins the parser loaded, with what each provides, and the plugin files that failed to
 * import (Airflow's "Plugin Import Errors"). */
export async function pluginsPage(main) {
  const box = page(main, "Plugins");
  try {
    const [plugins, errors] = await Promise.all([all("plugins", "plugins"), api("plugins/importErrors")]);
    box.replaceChildren(
      errors.total_entries ? h("section", { class: "error", role: "alert", "aria-label": "Plugin Import Errors" },
        h("strong", {}, `${errors.total_entries} Plugin Import Error${errors.total_entries === 1 ? "" : "s"}`),
        errors.import_errors.map((e) => h("details", {}, h("summary", {}, e.source), h("pre", {}, e.error)))) : "",
      plugins.length ? h("div", { class: "scroll" }, table(["Name", "Source", "Provides"], plugins.map((p) =>
        h("tr", { "data-plugin": p.name }, h("td", {}, p.name), h("td", {}, h("code", {}, p.source)),
          h("td", {}, provides(p)))),
      { class: "list plugins" })) : h("p", { class: "muted" }, "No plugins found."));
  } catch (error) {
    box.replaceChildren(errorBox(error));
  }
  return null;
}
