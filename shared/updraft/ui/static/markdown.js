// Markdown as the DAG author's doc_md and users' notes use it, drawn as DOM nodes (never through innerHTML): the
// text is the author's, not the UI's, so no HTML in it is ever parsed (it shows as text) and a link is one only
// for http(s), mailto or a path of this site — a javascript: or data: URL stays text. Covered: headings, paragraphs,
// lists (- * + and 1.), fenced and indented code, block quotes, rules, and inline code, bold, italics and links;
// anything else shows as the text it is, as a Markdown reader would see it.

import { h } from "./view.js";

const SAFE = /^(https?:|mailto:|\/|#|\.{0,2}\/)/i;

function safeUrl(url) {
  const text = url.trim();
  if (!SAFE.test(text)) return null;
  try {
    const parsed = new URL(text, location.href);
    return ["http:", "https:", "mailto:"].includes(parsed.protocol) ? text : null;
  } catch {
    return null;
  }
}

// Inline spans, first match wins: `code`, **bold**, *em* / _em_, [text](url), <url>.
const INLINE = /(`+)([^`]+?)\1|\*\*(.+?)\*\*|__(.+?)__|\*([^*\s][^*]*?)\*|\b_([^_\s][^_]*?)_\b|\[([^\]]+)\]\(([^)\s]+)\)|<(https?:\/\/[^>\s]+)>/;

function inline(text) {
  const out = [];
  let rest = text;
  for (let m = rest.match(INLINE); m; m = rest.match(INLINE)) {
    if (m.index) out.push(rest.slice(0, m.index));
    if (m[2] !== undefined) out.push(h("code", {}, m[2]));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(h("strong", {}, inline(m[3] ?? m[4])));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(h("em", {}, inline(m[5] ?? m[6])));
    else {
      const [label, url] = m[7] !== undefined ? [m[7], m[8]] : [m[9], m[9]];
      const href = safeUrl(url);
      out.push(href ? h("a", { href, rel: "noopener noreferrer", target: "_blank" }, inline(label)) : m[0]);
    }
    rest = rest.slice(m.index + m[0].length);
  }
  if (rest) out.push(rest);
  return out;
}

const LIST_ITEM = /^\s{0,3}([-*+]|\d+[.)])\s+(.*)$/;

/** The Markdown ``text`` as a <div class="markdown">. */
export function markdown(text) {
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s{0,3}(```|~~~)/);
    if (fence) {
      const body = [];
      for (i += 1; i < lines.length && !lines[i].trimStart().startsWith(fence[1]); i += 1) body.push(lines[i]);
      i += 1;
      blocks.push(h("pre", {}, h("code", {}, body.join("\n"))));
    } else if (!line.trim()) {
      i += 1;
    } else if (/^ {4}|^\t/.test(line)) {
      const body = [];
      for (; i < lines.length && (/^ {4}|^\t/.test(lines[i]) || !lines[i].trim()); i += 1) {
        body.push(lines[i].replace(/^ {4}|^\t/, ""));
      }
      blocks.push(h("pre", {}, h("code", {}, body.join("\n").trimEnd())));
    } else if (/^\s{0,3}#{1,6}\s/.test(line)) {
      const [, hashes, title] = line.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/);
      blocks.push(h(`h${Math.min(hashes.length + 1, 6)}`, {}, inline(title))); // the page's own h1 stays the only one
      i += 1;
    } else if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      blocks.push(h("hr", {}));
      i += 1;
    } else if (/^\s{0,3}>/.test(line)) {
      const body = [];
      for (; i < lines.length && /^\s{0,3}>/.test(lines[i]); i += 1) body.push(lines[i].replace(/^\s{0,3}>\s?/, ""));
      blocks.push(h("blockquote", {}, markdown(body.join("\n"))));
    } else if (LIST_ITEM.test(line)) {
      const ordered = /\d/.test(line.match(LIST_ITEM)[1]);
      const items = [];
      for (; i < lines.length && (LIST_ITEM.test(lines[i]) || /^\s{2,}\S/.test(lines[i])); i += 1) {
        const item = lines[i].match(LIST_ITEM);
        if (item) items.push(item[2]);
        else items[items.length - 1] += " " + lines[i].trim();
      }
      blocks.push(h(ordered ? "ol" : "ul", {}, items.map((item) => h("li", {}, inline(item)))));
    } else {
      const body = [];
      for (; i < lines.length && lines[i].trim() && !/^\s{0,3}(#{1,6}\s|```|~~~|>)/.test(lines[i])
        && !(body.length && LIST_ITEM.test(lines[i])); i += 1) body.push(lines[i].trim());
      blocks.push(h("p", {}, inline(body.join(" "))));
    }
  }
  return h("div", { class: "markdown" }, blocks);
}
