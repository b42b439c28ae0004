// The DAG's Code tab (/dags/{dag_id}/code): the source of the file the DAG was parsed from, as the parser stored it
// (GET dagSources/{dag_id}), with line numbers that a URL fragment (#L12) can point at.

import { api, path } from "./api.js";
import { h, time } from "./view.js";
import { dagTabPage } from "./dagtabs.js";

export const codeTab = dagTabPage("code", async (box, dagId, details) => {
  const { content } = await api(path("dagSources", dagId));
  const lines = content.replace(/\n$/, "").split("\n");
  box.replaceChildren(
    h("p", { class: "muted" }, h("code", {}, details.fileloc || details.relative_fileloc || ""),
      details.last_parsed ? [" · parsed ", time(details.last_parsed)] : ""),
    h("div", { class: "code-view", role: "region", "aria-label": "DAG source", tabindex: "0" },
      h("ol", {}, lines.map((line, i) => h("li", { id: `L${i + 1}` }, h("code", {}, line || " "))))));
  const target = location.hash && document.getElementById(location.hash.slice(1));
  if (target) target.scrollIntoView({ block: "center" });
});
