// The DAG's Backfills tab (/dags/{dag_id}/backfills): its backfills (GET backfills?dag_id=), newest first, with
// pause, resume and cancel for one not finished (Airflow's PUT backfills/{id}/pause|unpause|cancel).

import { api, canEdit, path } from "./api.js";
import { actionButton, h, table, time } from "./view.js";
import { dagTabPage } from "./dagtabs.js";

export const backfillsTab = dagTabPage("backfills", async (box, dagId) => {
  async function draw() {
    const { backfills } = await api("backfills", { query: { dag_id: dagId, limit: 100, order_by: "-id" } });
    const control = (b, verb, label) => actionButton(label, async () => {
      await api(`${path("backfills", String(b.id))}/${verb}`, { method: "PUT" });
      await draw();
    });
    box.replaceChildren(backfills.length ? h("div", { class: "scroll" }, table(["Id", "From", "To", "Reprocess",
      "Max active runs", "Created", "Completed", "State", canEdit() ? "Actions" : null].filter(Boolean),
    backfills.map((b) => h("tr", {}, [String(b.id), time(b.from_date), time(b.to_date), b.reprocess_behavior,
      String(b.max_active_runs), time(b.created_at), time(b.completed_at),
      b.completed_at ? "completed" : b.is_paused ? "paused" : "running",
      canEdit() && !b.completed_at ? h("span", { class: "actions" }, b.is_paused ? control(b, "unpause", "Resume")
        : control(b, "pause", "Pause"), control(b, "cancel", "Cancel")) : canEdit() ? "" : null,
    ].filter((cell) => cell !== null).map((cell) => h("td", {}, cell)))), { class: "list backfills" }))
      : h("p", { class: "muted" }, "No backfills."));
  }
  await draw();
  return { refresh: draw, live: () => true };
});
