// The attention heatmap: one <rect class="cell"> per (row, column) pair, rows = output steps
// (queries), columns = source tokens (keys). Every style is an SVG attribute, so the exported
// file looks like the page without the stylesheet.

import { FONT, clear, labelWidth, shortLabel, svgEl, textColourOn, weightColour } from "./svg.js";

const SIN45 = Math.SQRT1_2;

// view: {rows: [labels], cols: [labels], matrix: rows x cols weights, caption: string}
// visible: how many rows are revealed (step through); the others are hidden, not removed.
export function drawHeatmap(svg, view, visible = view.rows.length) {
  clear(svg);
  const nRows = view.rows.length;
  const nCols = view.cols.length;
  const cell = Math.max(14, Math.min(30, Math.floor(620 / Math.max(nCols, 1))));
  const rowLabels = view.rows.map((t) => shortLabel(t));
  const colLabels = view.cols.map((t) => shortLabel(t));
  const rowWidth = Math.max(24, ...rowLabels.map(labelWidth));
  const colWidth = Math.max(24, ...colLabels.map(labelWidth));
  const left = rowWidth + 14;
  const top = Math.ceil(colWidth * SIN45) + 18;
  const gridW = nCols * cell;
  const gridH = nRows * cell;
  const legendW = Math.min(200, Math.max(120, gridW));
  const captionW = view.caption ? labelWidth(view.caption) + 14 : 0;
  const width = Math.max(
    left + gridW + Math.ceil(colWidth * SIN45) + 12,
    left + legendW + captionW + 12,
  );
  const height = top + gridH + 58;
  for (const [name, value] of Object.entries({
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    "font-family": FONT,
    "font-size": 12,
  })) {
    svg.setAttribute(name, String(value));
  }
  svg.append(svgEl("rect", { x: 0, y: 0, width, height, fill: "#ffffff", class: "background" }));

  const cols = svgEl("g", { class: "col-labels" });
  colLabels.forEach((label, j) => {
    const x = left + j * cell + cell / 2;
    const y = top - 6;
    const text = svgEl("text", { x, y, transform: `rotate(-45 ${x} ${y})`, "data-col": j }, label);
    text.setAttribute("class", "col-label");
    cols.append(text);
  });
  svg.append(cols);

  const rows = svgEl("g", { class: "row-labels" });
  rowLabels.forEach((label, i) => {
    const attrs = { x: left - 6, y: top + i * cell + cell / 2, dy: "0.35em", "text-anchor": "end" };
    const text = svgEl("text", { ...attrs, class: "row-label", "data-row": i }, label);
    if (i >= visible) text.setAttribute("visibility", "hidden");
    rows.append(text);
  });
  svg.append(rows);

  const grid = svgEl("g", { class: "cells" });
  view.matrix.forEach((row, i) => {
    row.forEach((w, j) => {
      const rect = svgEl("rect", {
        class: "cell",
        x: left + j * cell,
        y: top + i * cell,
        width: cell,
        height: cell,
        fill: weightColour(w),
        stroke: "#ffffff",
        "stroke-width": 0.5,
        "data-row": i,
        "data-col": j,
        "data-weight": w,
      });
      if (i >= visible) rect.setAttribute("visibility", "hidden");
      grid.append(rect);
      if (cell >= 30 && nCols <= 12) {
        const label = svgEl(
          "text",
          {
            x: left + j * cell + cell / 2,
            y: top + i * cell + cell / 2,
            dy: "0.35em",
            "text-anchor": "middle",
            "font-size": 9,
            fill: textColourOn(w),
            "pointer-events": "none",
            class: "cell-value",
          },
          w.toFixed(2).replace(/^0/, ""),
        );
        if (i >= visible) label.setAttribute("visibility", "hidden");
        grid.append(label);
      }
    });
  });
  svg.append(grid);
  if (visible > 0 && visible < nRows) {
    const y = top + (visible - 1) * cell;
    svg.append(
      svgEl("rect", {
        class: "current-row",
        x: left - 1,
        y: y - 1,
        width: gridW + 2,
        height: cell + 2,
        fill: "none",
        stroke: "#d94801",
        "stroke-width": 2,
        "pointer-events": "none",
      }),
    );
  }
  drawLegend(svg, left, top + gridH + 22, legendW, view.caption);
}

function drawLegend(svg, x, y, width, caption) {
  const g = svgEl("g", { class: "legend" });
  const steps = 20;
  for (let k = 0; k < steps; k++) {
    g.append(
      svgEl("rect", {
        x: x + (k * width) / steps,
        y,
        width: width / steps + 0.5,
        height: 10,
        fill: weightColour((k + 0.5) / steps),
      }),
    );
  }
  g.append(svgEl("text", { x, y: y + 24, "font-size": 10 }, "0"));
  g.append(svgEl("text", { x: x + width, y: y + 24, "font-size": 10, "text-anchor": "end" }, "1"));
  if (caption) {
    g.append(svgEl("text", { x: x + width + 14, y: y + 9, "font-size": 11 }, caption));
  }
  svg.append(g);
}

// Rows' and columns' labels that belong to cell (i, j) get the class "active".
export function highlight(svg, i, j) {
  for (const node of svg.querySelectorAll(".active")) node.classList.remove("active");
  if (i === null) return;
  svg.querySelector(`.row-label[data-row="${i}"]`)?.classList.add("active");
  svg.querySelector(`.col-label[data-col="${j}"]`)?.classList.add("active");
}
