// The tooltip over the heatmap cells and the alignment lines: the exact weight and its pair.

import { highlight } from "./heatmap.js";
import { clear, formatWeight, htmlEl } from "./svg.js";

const HOVERABLE = ".cell, .link";

function move(tip, event) {
  if (tip.hidden) return;
  const x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
  tip.style.left = `${x + window.scrollX}px`;
  tip.style.top = `${event.clientY + 16 + window.scrollY}px`;
}

// Show `tip` over the `.cell` / `.link` elements of `svgs`; currentView() gives the labels.
export function attachTooltip(tip, svgs, heatmap, currentView) {
  function show(event) {
    const target = event.target;
    if (!target.matches?.(HOVERABLE)) return;
    const view = currentView();
    const i = Number(target.dataset.row);
    const j = Number(target.dataset.col);
    clear(tip);
    const pair = htmlEl(
      "span",
      { className: "tip-pair" },
      " ",
      htmlEl("span", { className: "tip-row" }, view.rows[i]),
      " ← ",
      htmlEl("span", { className: "tip-col" }, view.cols[j]),
    );
    const where = `row ${i + 1}, column ${j + 1} · ${view.caption}`;
    tip.append(
      htmlEl("span", { className: "tip-weight" }, formatWeight(target.dataset.weight)),
      pair,
      htmlEl("span", { className: "tip-where" }, where),
    );
    tip.hidden = false;
    move(tip, event);
    if (target.matches(".cell")) highlight(heatmap, i, j);
  }

  function hide(event) {
    if (event.relatedTarget?.matches?.(HOVERABLE)) return;
    tip.hidden = true;
    highlight(heatmap, null, null);
  }

  for (const svg of svgs) {
    svg.addEventListener("mouseover", show);
    svg.addEventListener("mousemove", (event) => move(tip, event));
    svg.addEventListener("mouseout", hide);
  }
}
