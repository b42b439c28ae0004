// Search DAGs (Airflow 3's Ctrl+K / ⌘K, and the header's button): a modal with a combobox that lists up to ten
// DAGs whose id contains what is typed (GET dags?dag_id_pattern=%text%, as the DAG list's search; one request per
// pause in typing); arrows move through them, Enter or a click opens the DAG, Escape closes.

import { api, link } from "./api.js";
import { h } from "./view.js";

const SHOWN = 10;
const PAUSE_MS = 150; // typing faster than this asks once, for what was typed last

let open = null; // the dialog while it is shown

/** Open the search (focus moves to its input); ``navigate`` follows the chosen DAG's link inside the app. */
export function searchDags(navigate) {
  if (open) {
    open.querySelector("input").focus();
    return;
  }
  const input = h("input", { type: "text", role: "combobox", "aria-expanded": "false", "aria-controls": "dag-hits",
    "aria-autocomplete": "list", "aria-label": "Search DAGs", placeholder: "Search DAGs", autocomplete: "off" });
  const list = h("ul", { id: "dag-hits", role: "listbox", "aria-label": "DAGs" });
  const status = h("p", { class: "muted", role: "status" });
  let hits = [];
  let active = -1;
  let asked = 0; // the latest request's number: an older answer arriving late draws nothing

  function close() {
    dialog.close();
    dialog.remove();
    open = null;
  }

  function choose(dag) {
    close();
    navigate(link("dags", dag.dag_id));
  }

  function draw() {
    list.replaceChildren(...hits.map((dag, i) => h("li", { role: "option", id: `dag-hit-${i}`,
      "aria-selected": String(i === active), "data-dag-id": dag.dag_id,
      onmousedown: (event) => event.preventDefault(), onclick: () => choose(dag) },
    h("strong", {}, dag.dag_display_name || dag.dag_id),
    dag.dag_display_name && dag.dag_display_name !== dag.dag_id ? h("span", { class: "muted" }, ` ${dag.dag_id}`) : "",
    dag.is_paused ? h("span", { class: "tag" }, "paused") : "")));
    input.setAttribute("aria-expanded", String(hits.length > 0));
    if (active >= 0) input.setAttribute("aria-activedescendant", `dag-hit-${active}`);
    else input.removeAttribute("aria-activedescendant");
  }

  async function ask() {
    const mine = ++asked;
    const text = input.value.trim();
    try {
      const page = await api("dags", { query: { dag_id_pattern: text ? `%${text}%` : undefined, limit: SHOWN,
        order_by: "dag_id" } });
      if (mine !== asked) return;
      hits = page.dags;
      active = hits.length ? 0 : -1;
      status.textContent = hits.length ? (page.total_entries > hits.length
        ? `The first ${hits.length} of ${page.total_entries} DAGs.` : "") : "No DAGs match.";
      draw();
    } catch (error) {
      if (mine === asked) status.textContent = String(error.message || error);
    }
  }

  let timer = null;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(ask, PAUSE_MS);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (!hits.length) return;
      active = (active + (event.key === "ArrowDown" ? 1 : hits.length - 1)) % hits.length;
      draw();
      list.children[active]?.scrollIntoView({ block: "nearest" });
    } else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();
      choose(hits[active]);
    }
  });

  const dialog = h("dialog", { class: "search", "aria-label": "Search DAGs" }, input, status, list);
  dialog.addEventListener("close", () => {
    if (open === dialog) {
      dialog.remove();
      open = null;
    }
  });
  dialog.addEventListener("keydown", (event) => { // Escape closes it at once (a search field would first clear)
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    }
  });
  dialog.addEventListener("click", (event) => { // a click on the backdrop (outside the box) closes it
    if (event.target === dialog) close();
  });
  document.body.append(dialog);
  open = dialog;
  dialog.showModal();
  input.focus();
  ask();
}
