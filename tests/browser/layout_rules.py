"""The layout rules every UI page must hold at every viewport, checked in the page by script (``RULES``).

1. No page-level horizontal scroll: the document is no wider than the viewport.
2. No element overlaps another: of the page's visible leaf boxes (elements without element children, and
   controls, images and SVG drawings as one box each; an inline element wrapped over lines, one box per line;
   nothing inside a closed ``<details>`` but its summary), no two that are not nested overlap by more than a
   pixel, each box cut to what its scrolling ancestors show (a cell scrolled out of its box overlaps nothing).
3. Every table column is visible or deliberately scrollable: each header cell is inside the viewport, or the
   table sits in (or is) a box that scrolls sideways (``overflow-x: auto|scroll``), inside the viewport, whose
   sticky column leaves room to scroll the other columns into view.

The graph (``svg.graph``) adds its own: every node shows its whole task id, no two nodes overlap, and no edge
passes through a node it does not join (``GRAPH_RULES``).
"""

from __future__ import annotations

from typing import Any

RULES = r"""() => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > vw + 1) {
    problems.push(`page scrolls sideways: ${document.documentElement.scrollWidth} px in ${vw} px`);
  }
  const clips = (el) => {
    const s = getComputedStyle(el);
    return s.overflowX !== "visible" || s.overflowY !== "visible";
  };
  // What of an element shows: each of its boxes (an inline element wrapped over lines has one per line) cut by
  // every clipping ancestor's.
  const shown = (el) => {
    const cuts = [];
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (clips(a)) cuts.push(a.getBoundingClientRect());
    }
    const rects = el.getClientRects().length > 1 && getComputedStyle(el).display === "inline"
      ? [...el.getClientRects()] : [el.getBoundingClientRect()];
    return rects.map((r) => cuts.reduce((box, c) => ({ l: Math.max(box.l, c.left), t: Math.max(box.t, c.top),
      r: Math.min(box.r, c.right), b: Math.min(box.b, c.bottom) }), { l: r.left, t: r.top, r: r.right, b: r.bottom }))
      .filter((b) => b.r - b.l > 1 && b.b - b.t > 1);
  };
  const visible = (el) => {
    const closed = el.closest("details:not([open])"); // a closed disclosure shows its summary only
    if (closed && !el.closest("summary") && el !== closed) return false;
    const s = getComputedStyle(el);
    if (s.visibility === "hidden" || s.display === "none" || Number(s.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const name = (el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className && typeof el.className
    === "string" ? "." + el.className.trim().split(/\s+/).join(".") : ""}("${(el.textContent || "").trim().slice(0, 30)}")`;
  const WHOLE = new Set(["svg", "input", "select", "textarea", "button", "img"]);
  const leaves = [];
  const walk = (el) => {
    for (const child of el.children) {
      const tag = child.tagName.toLowerCase();
      if (tag === "script" || tag === "style" || tag === "template" || !visible(child)) continue;
      if (WHOLE.has(tag) || child.children.length === 0) {
        for (const b of shown(child)) leaves.push([child, b]);
      } else {
        walk(child);
      }
    }
  };
  walk(document.body);
  for (let i = 0; i < leaves.length; i++) {
    const [a, p] = leaves[i];
    for (let j = i + 1; j < leaves.length; j++) {
      const [b, q] = leaves[j];
      const w = Math.min(p.r, q.r) - Math.max(p.l, q.l);
      const h = Math.min(p.b, q.b) - Math.max(p.t, q.t);
      if (w > 1 && h > 1 && a !== b && !a.contains(b) && !b.contains(a)) {
        problems.push(`overlap ${Math.round(w)}x${Math.round(h)} px: ${name(a)} and ${name(b)}`);
      }
    }
  }
  for (const th of document.querySelectorAll("table thead th")) {
    if (!visible(th)) continue;
    const r = th.getBoundingClientRect();
    let scroller = null;
    for (let a = th.closest("table"); a && a !== document.body; a = a.parentElement) {
      if (["auto", "scroll"].includes(getComputedStyle(a).overflowX)) { scroller = a; break; }
    }
    if (scroller) {
      const c = scroller.getBoundingClientRect();
      if (c.left < -1 || c.right > vw + 1) problems.push(`table scroller outside the viewport: ${name(scroller)}`);
      // A column that stays put (sticky) must leave room to scroll the others into view beside it.
      const stuck = [...scroller.querySelectorAll("th, td")].filter((c) => getComputedStyle(c).position === "sticky");
      const widest = Math.max(0, ...stuck.map((cell) => cell.getBoundingClientRect().width));
      const scrolls = scroller.scrollWidth > scroller.clientWidth + 1;
      if (scrolls && widest > scroller.clientWidth - 24) problems.push(`sticky column ${Math.round(widest)} px covers its ${""
        }${scroller.clientWidth} px scroller: ${name(scroller)}`);
    } else if (r.left < -1 || r.right > vw + 1) {
      problems.push(`column off-screen and not scrollable: ${name(th)} at ${Math.round(r.left)}-${Math.round(r.right)}`);
    }
  }
  return problems;
}"""

GRAPH_RULES = r"""() => {
  const problems = [];
  const svg = document.querySelector("svg.graph");
  if (!svg) return ["no graph"];
  const nodes = [...svg.querySelectorAll("g.node")].map((g) => {
    const r = g.querySelector("rect").getBoundingClientRect();
    return { id: g.dataset.taskId, r, label: g.querySelector("text.label").textContent,
      clipped: [...g.querySelectorAll("text.label")].some((t) => t.getBoundingClientRect().right > r.right + 1) };
  });
  for (const n of nodes) {
    if (n.label !== n.id.split(".").pop() && n.label !== n.id) problems.push(`label cut: ${n.id} shows ${n.label}`);
    if (n.clipped) problems.push(`label wider than its node: ${n.id}`);
  }
  for (let i = 0; i < nodes.length; i++) for (let j = i + 1; j < nodes.length; j++) {
    const p = nodes[i].r, q = nodes[j].r;
    if (Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1 && Math.min(p.bottom, q.bottom)
      - Math.max(p.top, q.top) > 1) problems.push(`nodes overlap: ${nodes[i].id} and ${nodes[j].id}`);
  }
  for (const edge of svg.querySelectorAll("path.edge")) {
    const [from, to] = edge.dataset.edge.split("->");
    const length = edge.getTotalLength();
    for (let s = 0; s <= length; s += 4) {
      const pt = edge.getPointAtLength(s).matrixTransform(edge.getScreenCTM());
      const hit = nodes.find((n) => n.id !== from && n.id !== to && pt.x > n.r.left + 2 && pt.x < n.r.right - 2
        && pt.y > n.r.top + 2 && pt.y < n.r.bottom - 2);
      if (hit) { problems.push(`edge ${edge.dataset.edge} crosses node ${hit.id}`); break; }
    }
  }
  return problems;
}"""


def layout_problems(page: Any) -> list[str]:
    """Every layout rule the page breaks now (empty when it holds them all)."""
    return list(page.evaluate(RULES))


def graph_problems(page: Any) -> list[str]:
    return list(page.evaluate(GRAPH_RULES))
