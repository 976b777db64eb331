/* attnkit.viz: the data of one render, as drawn. views.py inlines this file right after viz.js,
 * in the same function scope (see attnkit/viz/view_options.py for the format).
 *
 * weights: base64 of little-endian uint16, each round(w * 10^decimals), shape [L, H, Tq, Tk];
 * rest: null, or (sink "drop" / "separate") each row's raw mass over keys 1.., [L, H, Tq]; then
 * column 0 of weights is key 0's raw weight and columns 1.. are renormalised over keys 1..
 */

const LOG_FLOOR = 1e-4; // the "log" scale: this weight or less is white, 1 is dark
const APART = 6; // pixels between key 0 and the other keys (sink "separate")

function decodeWeights(text, count, decimals) {
  const bytes = atob(text);
  if (bytes.length !== 2 * count) {
    throw new Error("attnkit.viz: expected " + count + " weights, got " + bytes.length / 2);
  }
  const unit = Math.pow(10, decimals);
  const out = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    out[k] = (bytes.charCodeAt(2 * k) | (bytes.charCodeAt(2 * k + 1) << 8)) / unit;
  }
  return out;
}

function nest(flat, dims) {
  // a flat typed array -> nested arrays along dims; the last axis stays a typed subarray
  if (dims.length === 1) return flat;
  const inner = dims.slice(1).reduce((a, b) => a * b, 1);
  return range(dims[0]).map((i) => nest(flat.subarray(i * inner, (i + 1) * inner), dims.slice(1)));
}

function prepare(d) {
  // d.weights: what is drawn, (L, H, Tq, Tk); d.raw: the raw weights, for tooltips and numbers
  const [L, H, Tq, Tk] = d.shape;
  d.weights = nest(decodeWeights(d.weights, L * H * Tq * Tk, d.decimals), [L, H, Tq, Tk]);
  if (!d.rest) {
    d.rest = null;
    d.raw = d.weights;
    return;
  }
  d.rest = nest(decodeWeights(d.rest, L * H * Tq, d.decimals), [L, H, Tq]);
  d.raw = d.weights.map((layer, l) => layer.map((M, h) => M.map((row, i) =>
    row.map((w, j) => (j === 0 ? w : w * d.rest[l][h][i])))));
}

function apart(d) {
  // true when key 0 is not drawn among the other keys
  return d.sink === "drop" || d.sink === "separate";
}

function logLevel(w) {
  const floor = Math.log10(LOG_FLOOR);
  return clamp01((Math.log10(Math.max(w, LOG_FLOOR)) - floor) / -floor);
}

function levels(M, d) {
  // colour levels in [0, 1] of a matrix as drawn, on d.scale; key 0 of a sink mode keeps its
  // raw weight (linear, or log on the log scale)
  const first = apart(d) ? 1 : 0;
  return M.map((row) => {
    let top = 0;
    for (let j = first; j < row.length; j++) top = Math.max(top, row[j]);
    return Array.from(row, (w, j) => {
      if (d.scale === "log") return logLevel(w);
      if (d.scale === "row" && j >= first) return top > 0 ? clamp01(w / top) : 0;
      return clamp01(w);
    });
  });
}

function bestKeys(M, d) {
  // each row's strongest key among those drawn as keys (key 0 left out in the sink modes);
  // -1 for a row with no weight there
  const first = apart(d) ? 1 : 0;
  return M.map((row) => {
    let best = first;
    for (let j = first; j < row.length; j++) if (row[j] > row[best]) best = j;
    return row[best] > 0 ? best : -1;
  });
}

function columns(Tk, d, cell, gap) {
  // x offset of each key's column (null: not drawn) and the width of them all
  const x = [];
  let at = 0;
  for (let j = 0; j < Tk; j++) {
    if (j === 0 && d.sink === "drop") {
      x.push(null);
      continue;
    }
    x.push(at);
    at += cell + (j === 0 && d.sink === "separate" ? gap : 0);
  }
  return { x: x, width: at };
}

function meanShown(d, layer) {
  // the mean of a layer's heads as drawn: in the sink modes, the mean of the raw weights
  // renormalised again (each head's renormalised row weighted by its rest)
  const W = d.weights[layer];
  if (!d.rest) return meanOver(W);
  const R = d.rest[layer];
  const raw = meanOver(d.raw[layer]);
  return raw.map((row, i) => {
    const total = R.reduce((s, r) => s + r[i], 0);
    return row.map((w, j) => {
      if (j === 0) return w;
      return total > 0 ? W.reduce((s, M, h) => s + M[i][j] * R[h][i], 0) / total : 0;
    });
  });
}

function weightText(d, raw, shown, j) {
  // a tooltip's number: the raw weight, then what the sink mode drew
  if (!apart(d)) return fmt(raw);
  if (j === 0) return fmt(raw) + " (key 0, " + (d.sink === "drop" ? "left out)" : "drawn apart)");
  return fmt(raw) + " (" + fmt(shown) + " renormalised without key 0)";
}

function caption(d) {
  // what the scale and the sink mode did, said under the picture ("" for the defaults)
  const key = "key 0 (\u201c" + d.cols[0] + "\u201d)";
  const parts = [];
  if (d.scale === "row") parts.push("Colour: each query row divided by its largest weight.");
  if (d.scale === "log") {
    parts.push("Colour: log10 of the weight, from " + LOG_FLOOR + " or less (white) to 1.");
  }
  if (d.sink === "drop") {
    parts.push("Sink dropped: " + key + " is left out and each row is renormalised over the " +
      "other keys.");
  }
  if (d.sink === "separate") {
    parts.push("Sink apart: " + key + " is drawn apart with its raw weight; the other keys " +
      "are renormalised over themselves.");
  }
  if (apart(d)) parts.push("Tooltips give the raw weight first.");
  return parts.join(" ");
}

function noteOptions(d, parent) {
  const text = caption(d);
  if (text) make("p", { class: "akv-note akv-options" }, parent, text);
}
