// Alignment lines: source tokens along the top, output tokens along the bottom, and a line for
// each (output, source) pair that passes the filter (weight >= threshold, or the top k of the
// output's row). Thicker and darker lines carry more weight.

import { FONT, clear, labelWidth, shortLabel, svgEl } from "./svg.js";

const GAP = 10; // px between neighbouring tokens
const TOP = 24;
const BOTTOM_GAP = 150; // px between the two rows of tokens

// The (i, j, w) triples that pass: mode "threshold" keeps w >= value, "topk" the `value`
// largest weights of each row (ties broken by position).
export function selectLinks(matrix, mode, value, visible = matrix.length) {
  const links = [];
  matrix.slice(0, visible).forEach((row, i) => {
    if (mode === "topk") {
      const order = row.map((w, j) => [w, j]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
      for (const [w, j] of order.slice(0, Math.max(0, value))) links.push([i, j, w]);
    } else {
      row.forEach((w, j) => {
        if (w >= value) links.push([i, j, w]);
      });
    }
  });
  return links;
}

// Centres of tokens laid out in one line, each as wide as its label.
function layout(labels) {
  const centres = [];
  let x = 12;
  for (const label of labels) {
    const w = Math.max(labelWidth(label), 14);
    centres.push(x + w / 2);
    x += w + GAP;
  }
  return { centres, width: x + 12 };
}

// view: {rows, cols, matrix, colTitle, rowTitle}; filter: {mode, value}; visible: rows shown.
export function drawLines(svg, view, filter, visible = view.rows.length) {
  clear(svg);
  const cols = view.cols.map((t) => shortLabel(t));
  const rows = view.rows.map((t) => shortLabel(t));
  const top = layout(cols);
  const bottom = layout(rows);
  const width = Math.max(top.width, bottom.width, 240);
  const yTop = TOP + 16;
  const yBottom = yTop + BOTTOM_GAP;
  const height = yBottom + 40;
  for (const [name, value] of Object.entries({
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    "font-family": FONT,
    "font-size": 12,
  })) {
    svg.setAttribute(name, String(value));
  }
  svg.append(svgEl("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  svg.append(svgEl("text", { x: 12, y: 14, "font-size": 11, fill: "#555555" }, view.colTitle));
  svg.append(
    svgEl("text", { x: 12, y: height - 4, "font-size": 11, fill: "#555555" }, view.rowTitle),
  );

  const links = svgEl("g", { class: "links" });
  for (const [i, j, w] of selectLinks(view.matrix, filter.mode, filter.value, visible)) {
    links.append(
      svgEl("line", {
        class: "link",
        x1: top.centres[j],
        y1: yTop + 6,
        x2: bottom.centres[i],
        y2: yBottom - 16,
        stroke: "#08306b",
        "stroke-width": (0.75 + 5 * w).toFixed(2),
        "stroke-opacity": (0.15 + 0.85 * w).toFixed(3),
        "stroke-linecap": "round",
        "data-row": i,
        "data-col": j,
        "data-weight": w,
      }),
    );
  }
  svg.append(links);

  cols.forEach((label, j) => {
    const text = svgEl("text", { x: top.centres[j], y: yTop, "text-anchor": "middle" }, label);
    text.setAttribute("class", "token src-token");
    text.setAttribute("data-col", j);
    svg.append(text);
  });
  rows.forEach((label, i) => {
    const attrs = { x: bottom.centres[i], y: yBottom, "text-anchor": "middle" };
    const text = svgEl("text", { ...attrs, class: "token tgt-token", "data-row": i }, label);
    if (i >= visible) text.setAttribute("visibility", "hidden");
    svg.append(text);
  });
}
