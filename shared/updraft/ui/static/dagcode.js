// The DAG's Code tab (/dags/{dag_id}/code): the source of the file the DAG was parsed from, as the parser stored it
// (GET dagSources/{dag_id}), with line numbers that a URL fragment (#L12) can point at; wrap and full screen (keys
// w and f) as Airflow's.

import { api, path } from "./api.js";
import { fullScreenToggle, toggleWithShortcut } from "./shortcuts.js";
import { h, time } from "./view.js";
import { dagTabPage } from "./dagtabs.js";

export const codeTab = dagTabPage("code", async (box, dagId, details) => {
  const { content } = await api(path("dagSources", dagId));
  const lines = content.replace(/\n$/, "").split("\n");
  const view = h("div", { class: "code-view", role: "region", "aria-label": "DAG source", tabindex: "0" },
    h("ol", {}, lines.map((line, i) => h("li", { id: `L${i + 1}` }, h("code", {}, line || " ")))));
  box.replaceChildren(
    h("p", { class: "muted" }, h("code", {}, details.fileloc || details.relative_fileloc || ""),
      details.last_parsed ? [" · parsed ", time(details.last_parsed)] : ""),
    h("section", { class: "code" }, h("div", { class: "log-tools code-tools" },
      toggleWithShortcut("Wrap", false, (on) => view.classList.toggle("wrap", on),
        { keys: "w", category: "code", description: "Toggle Wrap" }),
      fullScreenToggle(() => view.parentElement, "code")), view));
  const target = location.hash && document.getElementById(location.hash.slice(1));
  if (target) target.scrollIntoView({ block: "center" });
});
