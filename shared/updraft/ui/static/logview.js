// A try's log with Airflow's log toolbar: a level filter, a text filter, Download, and the view's settings (wrap,
// timestamps, source, full screen), each with Airflow's key (d, /, w, t, s, f; Ctrl+↑/↓ to the top or end). A
// line's level is read from
// the task log's format ("[time] {file.py:12} WARNING - message", or structlog's "[warning  ]"); a line without one
// belongs to the message above it (lines before any count as info, as Airflow logs a task's prints). A traceback
// (from "Traceback (most recent call last):" to its exception's line, chained ones included) is an error, as
// Airflow logs a task's failure: filtering to errors keeps it whole. Download saves the whole try's log as text,
// whatever the filters show.

import { fullScreenToggle, toggleWithShortcut, withShortcut } from "./shortcuts.js";
import { h } from "./view.js";

const LEVELS = ["debug", "info", "warning", "error", "critical"];
const LEVEL = /(?:\}\s+|\[\s*|^)(debug|info|warning|warn|error|critical|fatal)\b\s*(?:-|\]|:)/i;

const ERROR = 3;
// The task log's line prefix (runtime/logs.py): "[2026-01-02 03:04:05,678] " and "{file.py:12} ", hidden on demand.
const TIMESTAMP = /^\[\d{4}-\d\d-\d\d[ T][^\]]*\]\s?/;
const SOURCE = /\{[^{}\s]+:\d+\}\s?/;
const TRACEBACK = /^Traceback \(most recent call last\):|^(During handling of|The above exception)/;

/** Each line of ``text`` with its level's rank in LEVELS. */
export function levelled(text) {
  let rank = 1;
  let traceback = null; // while in one: the rank of the lines before it, which the lines after it go back to
  return text.split("\n").map((line) => {
    const found = line.match(LEVEL);
    if (found) {
      const word = found[1].toLowerCase();
      rank = word === "warn" ? 2 : word === "fatal" ? 4 : LEVELS.indexOf(word);
      traceback = null;
    } else if (TRACEBACK.test(line)) {
      if (traceback === null) traceback = rank;
      rank = Math.max(rank, ERROR);
    } else if (traceback !== null && line && !/^\s/.test(line)) {
      const own = rank; // the exception's own line closes the traceback
      rank = traceback;
      traceback = null;
      return [line, own];
    }
    return [line, rank];
  });
}

/** The toolbar over ``logBox`` (inside its section): { controls, show(text) }; ``fileName()`` names the download. */
export function logFilter(logBox, fileName) {
  let text = "";
  const view = { timestamps: true, source: true };
  const level = h("select", { "aria-label": "Log level" },
    h("option", { value: "0" }, "All levels"),
    LEVELS.slice(1).map((name, i) => h("option", { value: String(i + 1) }, `${name} and above`)));
  const search = withShortcut(h("input", { type: "search", placeholder: "Filter lines",
    "aria-label": "Filter log lines" }), { keys: "/", category: "logs", description: "Search logs" });
  const count = h("span", { class: "muted", "aria-live": "polite" });

  function draw() {
    const min = Number(level.value);
    const needle = search.value.toLowerCase();
    const lines = levelled(text);
    const shown = lines.filter(([line, rank]) => rank >= min && (!needle || line.toLowerCase().includes(needle)));
    logBox.textContent = shown.map(([line]) => {
      const bare = view.timestamps ? line : line.replace(TIMESTAMP, "");
      return view.source ? bare : bare.replace(SOURCE, "");
    }).join("\n");
    count.textContent = min || needle ? `${shown.length} of ${lines.length} lines` : "";
  }

  function download() {
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    const anchor = h("a", { href: url, download: fileName() });
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  const scroll = (label, top, keys, description) => withShortcut(h("button", { type: "button",
    "aria-label": description, onclick: () => logBox.scrollTo({ top: top ? 0 : logBox.scrollHeight }) }, label),
  { keys, category: "logs", description });

  level.addEventListener("change", draw);
  search.addEventListener("input", draw);
  const controls = h("div", { class: "log-tools" }, level, search, count,
    toggleWithShortcut("Wrap", true, (on) => logBox.classList.toggle("nowrap", !on),
      { keys: "w", category: "logs", description: "Toggle Wrap" }),
    toggleWithShortcut("Timestamps", true, (on) => { view.timestamps = on; draw(); },
      { keys: "t", category: "logs", description: "Toggle timestamps" }),
    toggleWithShortcut("Source", true, (on) => { view.source = on; draw(); },
      { keys: "s", category: "logs", description: "Toggle source" }),
    fullScreenToggle(() => logBox.parentElement, "logs"), scroll("Top", true, "mod+ArrowUp", "Scroll to top"),
    scroll("End", false, "mod+ArrowDown", "Scroll to bottom"),
    withShortcut(h("button", { type: "button", onclick: download }, "Download"),
      { keys: "d", category: "logs", description: "Download logs" }));
  return { controls, show: (value) => { text = value; draw(); } };
}
