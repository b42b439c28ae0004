// Pools, variables and the audit log: Airflow's list routes drawn as tables (values the API masks
// stay masked: the page shows what the route returns).

import { all } from "./api.js";
import { errorBox, h, table, time } from "./view.js";

function listPage(title, rel, key, headers, row, query = {}) {
  return async (main) => {
    const box = h("div", {});
    main.replaceChildren(h("h1", {}, title), box);
    async function draw() {
      try {
        const items = await all(rel, key, query);
        box.replaceChildren(items.length ? table(headers, items.map((item) => h("tr", {}, row(item).map((cell) =>
          h("td", {}, cell))))) : h("p", { class: "muted" }, `No ${title.toLowerCase()}.`));
      } catch (error) {
        box.replaceChildren(error.status === 404 ? h("p", { class: "muted" },
          `This environment's API has no ${rel} route yet.`) : errorBox(error));
      }
    }
    await draw();
    return { refresh: draw, live: () => true };
  };
}

const slots = (n) => (n < 0 ? "∞" : String(n));

export const poolsPage = listPage("Pools", "pools", "pools",
  ["Pool", "Slots", "Running", "Queued", "Open", "Description"],
  (p) => [p.name, slots(p.slots), String(p.running_slots), String(p.queued_slots), slots(p.open_slots),
    p.description || ""]);

export const variablesPage = listPage("Variables", "variables", "variables", ["Key", "Value", "Description"],
  (v) => [h("code", {}, v.key), v.value ?? "", v.description || ""]);

export const eventsPage = listPage("Audit log", "eventLogs", "event_logs",
  ["When", "Event", "DAG", "Task", "Run", "Owner"],
  (e) => [time(e.when), e.event, e.dag_id || "", e.task_id || "", e.run_id || "", e.owner || ""],
  { order_by: "-when" });
