/* attnkit.viz: draws head_view, model_view and cross_view from the JSON of one render.
 *
 * attnkit/viz/views.py inlines this file into every render inside a function scope and then
 * calls attnkitMount(id) with the id of that render's root element. Nothing here defines
 * globals, reaches outside its root, or fetches anything.
 *
 * Data (script.akv-data): {kind, title, shape: [L, H, Tq, Tk] (as embedded), rows (query
 * labels), cols (key labels), layerIds and headIds (the true numbers of the embedded layers and
 * heads), scale, sink, weights and rest (encoded: see viz_data.js, which decodes them), decimals,
 * ...the view's own options}. Layers and heads in the options are true numbers.
 */
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const ROW = 20; // head view: pixels per token
const THUMB = 56; // model view: thumbnail size in CSS pixels
const FONT = "12px sans-serif"; // as .akv svg text in viz.css, for measuring labels
const LOW = [255, 255, 255]; // colour of weight 0 ...
const HIGH = [8, 48, 107]; // ... and of weight 1

function make(tag, attrs, parent, text) {
  const svg = tag.startsWith("svg:");
  const node = svg ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  }
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function fmt(w) {
  return w.toFixed(3);
}

function clamp01(w) {
  return Math.min(1, Math.max(0, w));
}

function ramp(w) {
  const t = clamp01(w);
  return LOW.map((lo, k) => Math.round(lo + (HIGH[k] - lo) * t));
}

function fill(w) {
  return "rgb(" + ramp(w).join(",") + ")";
}

function headColour(h, H) {
  return "hsl(" + Math.round((h * 360) / Math.max(H, 1)) + ",70%,42%)";
}

let measurer = null;
function textWidth(labels, scale) {
  if (!measurer) {
    measurer = document.createElement("canvas").getContext("2d");
    measurer.font = FONT;
  }
  let widest = 0;
  for (const s of labels) widest = Math.max(widest, measurer.measureText(s).width);
  return Math.ceil(widest * (scale || 1));
}

function tooltip(root) {
  const tip = make("div", { class: "akv-tip", role: "status" }, root);
  tip.hidden = true;
  return {
    show(text, event) {
      tip.textContent = text;
      tip.hidden = false;
      const box = root.getBoundingClientRect();
      tip.style.left = (event.clientX - box.left + 14) + "px";
      tip.style.top = (event.clientY - box.top + 14) + "px";
    },
    hide() {
      tip.hidden = true;
    },
  };
}

function select(parent, label, options, value, onChange) {
  const wrap = make("label", { class: "akv-control" }, parent, label + " ");
  const menu = make("select", { class: "akv-" + label.toLowerCase() }, wrap);
  for (const [key, text] of options) make("option", { value: key }, menu, text);
  menu.value = String(value);
  menu.addEventListener("change", () => onChange(menu.value));
  return menu;
}

function range(n) {
  return Array.from({ length: n }, (_, i) => i);
}

function meanOver(matrices) {
  // mean of equally shaped matrices; an empty list gives null
  if (!matrices.length) return null;
  return matrices[0].map((row, i) =>
    row.map((_, j) => matrices.reduce((s, m) => s + m[i][j], 0) / matrices.length));
}

// ---- heatmap (model view zoom, cross view) ---------------------------------------------------

function heatmap(parent, M, rows, cols, tip, opts) {
  // M: (Tq, Tk) as drawn; opts: {d (the view's data), raw (the raw weights), argmax, onHover}
  const options = opts || {};
  const d = options.d;
  const R = options.raw || M;
  const Tq = rows.length;
  const Tk = cols.length;
  const cell = Math.max(8, Math.min(26, Math.floor(480 / Math.max(Tq, Tk))));
  const size = Math.min(12, cell - 1);
  const left = textWidth(rows, size / 12) + 8;
  const top = textWidth(cols, size / 12) + 8;
  const layout = columns(Tk, d, cell, APART);
  const svg = make("svg:svg", {
    class: "akv-heatmap", width: left + layout.width + 2, height: top + Tq * cell + 2,
  }, parent);
  const labels = make("svg:g", { "font-size": size }, svg);
  const rowText = rows.map((s, i) => make("svg:text", {
    class: "akv-tok akv-row", x: left - 4, y: top + i * cell + cell / 2 + size * 0.35,
    "text-anchor": "end", "data-i": i,
  }, labels, s));
  const colText = cols.map((s, j) => {
    if (layout.x[j] === null) return null;
    const x = left + layout.x[j] + cell / 2 + size * 0.35;
    return make("svg:text", {
      class: "akv-tok akv-col", transform: "translate(" + x + "," + (top - 4) + ") rotate(-90)",
      "data-j": j,
    }, labels, s);
  });
  const cells = make("svg:g", { class: "akv-cells" }, svg);
  const level = levels(M, d);
  const best = bestKeys(M, d);
  for (let i = 0; i < Tq; i++) {
    for (let j = 0; j < Tk; j++) {
      if (layout.x[j] === null) continue;
      const argmax = options.argmax && j === best[i] ? " akv-argmax" : "";
      const sink = j === 0 && apart(d) ? " akv-sink" : "";
      make("svg:rect", {
        class: "akv-cell" + argmax + sink, x: left + layout.x[j], y: top + i * cell,
        width: cell, height: cell, fill: fill(level[i][j]), "data-i": i, "data-j": j,
      }, cells);
    }
  }
  let lit = [];
  function clear() {
    for (const node of lit) node.classList.remove("akv-hl", "akv-hot");
    lit = [];
  }
  cells.addEventListener("mouseover", (event) => {
    const rect = event.target;
    if (!rect.classList.contains("akv-cell")) return;
    const i = +rect.dataset.i;
    const j = +rect.dataset.j;
    clear();
    lit = [rowText[i], colText[j], rect];
    rowText[i].classList.add("akv-hl");
    colText[j].classList.add("akv-hl");
    rect.classList.add("akv-hot");
    tip.show(rows[i] + " \u2192 " + cols[j] + ": " + weightText(d, R[i][j], M[i][j], j), event);
    if (options.onHover) options.onHover(i, j);
  });
  cells.addEventListener("mouseleave", () => {
    clear();
    tip.hide();
    if (options.onHover) options.onHover(null, null);
  });
  return svg;
}

// ---- head view ---------------------------------------------------------------------------------

function headView(ctx) {
  const d = ctx.data;
  const [L, H, Tq, Tk] = d.shape;
  let layer = d.layerIds.indexOf(d.layer); // a position among the embedded layers
  const shown = new Set(d.heads.map((id) => d.headIds.indexOf(id)));
  const bar = make("div", { class: "akv-bar" }, ctx.body);
  select(bar, "Layer", range(L).map((l) => [l, String(d.layerIds[l])]), layer, (v) => {
    layer = +v;
    draw();
  });
  const chips = make("span", { class: "akv-heads" }, bar, "Heads ");
  for (let h = 0; h < H; h++) {
    const chip = make("button", {
      type: "button", class: "akv-chip", "data-head": d.headIds[h], "aria-pressed": shown.has(h),
      title: "show or hide head " + d.headIds[h],
    }, chips, String(d.headIds[h]));
    chip.style.setProperty("--akv-c", headColour(h, H));
    chip.addEventListener("click", () => {
      if (shown.has(h)) shown.delete(h);
      else shown.add(h);
      chip.setAttribute("aria-pressed", String(shown.has(h)));
      draw();
    });
  }
  const NUM = 44;
  const GAP = 160;
  const SINK = d.sink === "separate" ? 30 : 0; // a bar of key 0's weight beside each query
  const xQuery = NUM + textWidth(d.rows);
  const x1 = xQuery + 6 + SINK;
  const x2 = x1 + GAP;
  const xKey = x2 + 6;
  const svg = make("svg:svg", {
    class: "akv-lines", width: xKey + textWidth(d.cols) + NUM, height: Math.max(Tq, Tk) * ROW + 4,
  }, ctx.body);
  make("p", { class: "akv-note" }, ctx.body,
    "Lines: attention of each query (left) to each key (right), opacity = weight, one " +
    "colour per head. Hover a token for its weights (mean of the shown heads)." +
    (d.sink === "separate" ? " Bars beside the queries: the weight on key 0." : ""));
  noteOptions(d, ctx.body);
  const mid = (i) => i * ROW + ROW / 2 + 2;

  function draw() {
    svg.textContent = "";
    const W = d.weights[layer]; // (H, Tq, Tk) as drawn
    const R = d.raw[layer]; // (H, Tq, Tk) raw
    const heads = [...shown].sort((a, b) => a - b);
    const lines = make("svg:g", { class: "akv-g-lines" }, svg);
    const first = apart(d) ? 1 : 0;
    for (const h of heads) {
      const level = levels(W[h], d);
      for (let i = 0; i < Tq; i++) {
        for (let j = first; j < Tk; j++) {
          if (level[i][j] < d.minWeight) continue;
          make("svg:line", {
            class: "akv-line", x1: x1, y1: mid(i), x2: x2, y2: mid(j), stroke: headColour(h, H),
            "stroke-opacity": level[i][j], "data-head": d.headIds[h], "data-h": h, "data-q": i,
            "data-k": j,
          }, lines);
        }
      }
    }
    const side = (labels, x, anchor, cls, numX, numAnchor) => labels.map((s, i) => ({
      tok: make("svg:text", {
        class: "akv-tok " + cls, x: x, y: mid(i) + 4, "text-anchor": anchor, "data-i": i,
      }, svg, s),
      num: make("svg:text", {
        class: "akv-w " + cls + "-w", x: numX, y: mid(i) + 4, "text-anchor": numAnchor,
      }, svg),
    }));
    const queries = side(d.rows, xQuery, "end", "akv-q", NUM - 6, "end");
    const keys = side(d.cols, xKey, "start", "akv-k", svg.width.baseVal.value - NUM + 6, "start");
    if (first) keys[0].tok.classList.add("akv-apart");
    const mean = meanOver(heads.map((h) => R[h])); // raw, (Tq, Tk) or null
    if (SINK && mean) sinkBars(svg, mean, xQuery + 6, SINK - 8, mid, ctx.tip, d);

    function focus(isQuery, index) {
      svg.classList.add("akv-focus");
      for (const line of lines.children) {
        line.classList.toggle("akv-on", +line.dataset[isQuery ? "q" : "k"] === index);
      }
      (isQuery ? queries : keys)[index].tok.classList.add("akv-hl");
      if (!mean) return;
      const other = isQuery ? keys : queries;
      other.forEach((o, k) => {
        o.num.textContent = fmt(isQuery ? mean[index][k] : mean[k][index]);
      });
    }
    function blur() {
      svg.classList.remove("akv-focus");
      for (const o of queries.concat(keys)) {
        o.tok.classList.remove("akv-hl");
        o.num.textContent = "";
      }
    }
    queries.forEach((o, i) => {
      o.tok.addEventListener("mouseenter", () => focus(true, i));
      o.tok.addEventListener("mouseleave", blur);
    });
    keys.forEach((o, j) => {
      o.tok.addEventListener("mouseenter", () => focus(false, j));
      o.tok.addEventListener("mouseleave", blur);
    });
    lines.addEventListener("mouseover", (event) => {
      const line = event.target;
      if (!line.dataset || line.dataset.q === undefined) return;
      const [h, i, j] = [+line.dataset.h, +line.dataset.q, +line.dataset.k];
      ctx.tip.show("head " + d.headIds[h] + ": " + d.rows[i] + " \u2192 " + d.cols[j] + ": " +
        weightText(d, R[h][i][j], W[h][i][j], j), event);
    });
    lines.addEventListener("mouseout", () => ctx.tip.hide());
  }
  draw();
}

function sinkBars(svg, mean, x, width, mid, tip, d) {
  // sink "separate" in the head view: a bar per query, its length the (mean) weight on key 0
  const group = make("svg:g", { class: "akv-sinkbars" }, svg);
  mean.forEach((row, i) => {
    const text = d.rows[i] + " \u2192 " + d.cols[0] + ": " + fmt(row[0]) +
      " (key 0, drawn apart; mean of the shown heads)";
    const frame = make("svg:rect", {
      class: "akv-sinkframe", x: x, y: mid(i) - 6, width: width, height: 12, "data-q": i,
    }, group);
    const bar = make("svg:rect", {
      class: "akv-sinkbar", x: x, y: mid(i) - 6, width: width * clamp01(row[0]), height: 12,
      "data-q": i,
    }, group);
    for (const node of [frame, bar]) {
      node.addEventListener("mouseover", (event) => tip.show(text, event));
      node.addEventListener("mouseout", () => tip.hide());
    }
  });
}

// ---- model view --------------------------------------------------------------------------------

function paint(canvas, M, d) {
  // one pixel per weight on d.scale; key 0 left out (sink "drop") or one pixel apart
  const Tq = M.length;
  const layout = columns(M[0].length, d, 1, 1);
  const level = levels(M, d);
  canvas.width = layout.width;
  canvas.height = Tq;
  const g = canvas.getContext("2d");
  const image = g.createImageData(layout.width, Tq);
  for (let i = 0; i < Tq; i++) {
    level[i].forEach((t, j) => {
      if (layout.x[j] === null) return;
      const [r, gr, b] = ramp(t);
      image.data.set([r, gr, b, 255], (i * layout.width + layout.x[j]) * 4);
    });
  }
  g.putImageData(image, 0, 0);
  return layout.width;
}

function modelView(ctx) {
  const d = ctx.data;
  const [L, H, Tq, Tk] = d.shape;
  const grid = make("div", { class: "akv-grid" }, ctx.body);
  grid.style.gridTemplateColumns = "auto repeat(" + H + ", auto)";
  make("span", { class: "akv-corner" }, grid, "layer \\ head");
  for (let h = 0; h < H; h++) make("span", { class: "akv-colhead" }, grid, String(d.headIds[h]));
  noteOptions(d, ctx.body);
  const zoomBox = make("div", { class: "akv-zoom" }, ctx.body);
  const thumbs = [];
  function zoom(l, h) {
    // l, h: positions among the embedded layers and heads
    for (const t of thumbs) t.classList.toggle("akv-sel", t === thumbs[l * H + h]);
    zoomBox.textContent = "";
    make("div", { class: "akv-zoom-title" }, zoomBox,
      "Layer " + d.layerIds[l] + ", head " + d.headIds[h]);
    heatmap(zoomBox, d.weights[l][h], d.rows, d.cols, ctx.tip, { d: d, raw: d.raw[l][h] });
  }
  const scale = THUMB / Math.max(Tq, Tk);
  for (let l = 0; l < L; l++) {
    make("span", { class: "akv-rowhead" }, grid, String(d.layerIds[l]));
    for (let h = 0; h < H; h++) {
      const name = "layer " + d.layerIds[l] + ", head " + d.headIds[h];
      const canvas = make("canvas", {
        class: "akv-thumb", tabindex: 0, role: "button", "data-layer": d.layerIds[l],
        "data-head": d.headIds[h], title: name + ": click to zoom", "aria-label": name,
      }, grid);
      const width = paint(canvas, d.weights[l][h], d);
      canvas.style.width = Math.round(width * scale) + "px";
      canvas.style.height = Math.round(Tq * scale) + "px";
      canvas.addEventListener("click", () => zoom(l, h));
      canvas.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          zoom(l, h);
        }
      });
      thumbs.push(canvas);
    }
  }
  if (d.zoom) zoom(d.layerIds.indexOf(d.zoom[0]), d.headIds.indexOf(d.zoom[1]));
  else make("p", { class: "akv-note" }, zoomBox, "Click a head to zoom.");
}

// ---- cross view --------------------------------------------------------------------------------

function alignment(parent, M, R, d, tip) {
  // source tokens on top, target tokens below, a line per (target, source) pair whose level
  // (d.scale) is >= d.minWeight; M as drawn, R raw; key 0 gets no lines in the sink modes
  const rows = d.rows;
  const cols = d.cols;
  const level = levels(M, d);
  const pad = 12;
  const widths = (labels) => labels.map((s) => textWidth([s]) + pad);
  const centres = (ws, total) => {
    let x = (total - ws.reduce((a, b) => a + b, 0)) / 2;
    return ws.map((w) => (x += w) - w / 2);
  };
  const srcW = widths(cols);
  const tgtW = widths(rows);
  const total = Math.max(srcW.reduce((a, b) => a + b, 0), tgtW.reduce((a, b) => a + b, 0));
  const xs = centres(srcW, total);
  const xt = centres(tgtW, total);
  const scroll = make("div", { class: "akv-scroll" }, parent);
  const svg = make("svg:svg", { class: "akv-align", width: total + 4, height: 150 }, scroll);
  const lines = make("svg:g", { class: "akv-g-lines" }, svg);
  rows.forEach((_, i) => cols.forEach((_, j) => {
    const w = level[i][j];
    if (w < d.minWeight || (j === 0 && apart(d))) return;
    make("svg:line", {
      class: "akv-line", x1: xs[j], y1: 24, x2: xt[i], y2: 124, "stroke-opacity": w,
      "data-q": i, "data-k": j,
    }, lines);
  }));
  const src = cols.map((s, j) => make("svg:text", {
    class: "akv-tok akv-src", x: xs[j], y: 16, "text-anchor": "middle", "data-j": j,
  }, svg, s));
  if (apart(d)) src[0].classList.add("akv-apart");
  const tgt = rows.map((s, i) => make("svg:text", {
    class: "akv-tok akv-tgt", x: xt[i], y: 140, "text-anchor": "middle", "data-i": i,
  }, svg, s));
  function focus(i, j) {
    // i: a target row (its lines stay), j: a source column; (i, j) both: that pair is hot
    for (const t of src.concat(tgt)) t.classList.remove("akv-hl");
    if (i === null && j === null) {
      svg.classList.remove("akv-focus");
      for (const line of lines.children) line.classList.remove("akv-on", "akv-hot");
      return;
    }
    svg.classList.add("akv-focus");
    for (const line of lines.children) {
      const q = +line.dataset.q;
      const k = +line.dataset.k;
      line.classList.toggle("akv-on", i === null ? k === j : q === i);
      line.classList.toggle("akv-hot", q === i && k === j);
    }
    if (i !== null) tgt[i].classList.add("akv-hl");
    if (j !== null) src[j].classList.add("akv-hl");
  }
  tgt.forEach((t, i) => {
    t.addEventListener("mouseenter", () => focus(i, null));
    t.addEventListener("mouseleave", () => focus(null, null));
  });
  src.forEach((t, j) => {
    t.addEventListener("mouseenter", () => focus(null, j));
    t.addEventListener("mouseleave", () => focus(null, null));
  });
  lines.addEventListener("mouseover", (event) => {
    const line = event.target;
    if (!line.dataset || line.dataset.q === undefined) return;
    const [i, j] = [+line.dataset.q, +line.dataset.k];
    tip.show(rows[i] + " \u2192 " + cols[j] + ": " + weightText(d, R[i][j], M[i][j], j), event);
  });
  lines.addEventListener("mouseout", () => tip.hide());
  return { focus };
}

function crossView(ctx) {
  const d = ctx.data;
  const [L, H] = d.shape;
  let layer = d.layerIds.indexOf(d.layer); // a position among the embedded layers
  let head = d.head; // null: the mean of the heads (every head is embedded)
  if (L > 1 || H > 1) {
    const bar = make("div", { class: "akv-bar" }, ctx.body);
    select(bar, "Layer", range(L).map((l) => [l, String(d.layerIds[l])]), layer, (v) => {
      layer = +v;
      draw();
    });
    const heads = [["mean", "mean of heads"]].concat(range(H).map((h) => [h, String(h)]));
    select(bar, "Head", heads, head === null ? "mean" : head, (v) => {
      head = v === "mean" ? null : +v;
      draw();
    });
  }
  const wrap = make("div", { class: "akv-cross" }, ctx.body);
  const left = make("div", {}, wrap);
  const right = make("div", {}, wrap);
  make("p", { class: "akv-note" }, ctx.body,
    "Rows: target tokens; columns: source tokens; outlined: each row's strongest source. " +
    "Lines join each target token (below) to the source tokens it attends to.");
  noteOptions(d, ctx.body);
  function draw() {
    left.textContent = "";
    right.textContent = "";
    const M = head === null ? meanShown(d, layer) : d.weights[layer][head];
    const R = head === null ? meanOver(d.raw[layer]) : d.raw[layer][head];
    const lines = alignment(right, M, R, d, ctx.tip);
    heatmap(left, M, d.rows, d.cols, ctx.tip, {
      d: d, raw: R, argmax: true, onHover: lines.focus,
    });
  }
  draw();
}

// ---- entry point ---------------------------------------------------------------------------------

function attnkitRender(root) {
  if (!root) return;
  const source = root.querySelector('script[type="application/json"]');
  if (!source) throw new Error("attnkit.viz: no data in #" + root.id);
  const data = JSON.parse(source.textContent);
  for (const old of root.querySelectorAll(".akv-body, .akv-fallback")) old.remove();
  const body = make("div", { class: "akv-body" }, root);
  if (data.title) make("div", { class: "akv-title" }, body, data.title);
  const ctx = { data: data, body: body, tip: tooltip(body) };
  prepare(data);
  const views = { head: headView, model: modelView, cross: crossView };
  views[data.kind](ctx);
  root.setAttribute("data-ready", "true");
}

function attnkitMount(id, tries) {
  // classic Notebook runs an output's scripts before attaching the output to the page:
  // wait (up to 10 s) until the root element is in the document
  const root = document.getElementById(id);
  if (root) attnkitRender(root);
  else if ((tries || 0) < 200) setTimeout(() => attnkitMount(id, (tries || 0) + 1), 50);
}
