// Small helpers shared by the pictures: SVG elements, a colour scale, number formats.
// Written for attnkit's explorer; no libraries.

export const SVG_NS = "http://www.w3.org/2000/svg";
export const FONT = "ui-monospace, Menlo, Consolas, monospace";
export const CHAR_WIDTH = 7.3; // px per character of a 12px monospace label (for layout)

// An SVG element with attributes; children (elements or strings) are appended.
export function svgEl(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

// An HTML element with properties/attributes and children.
export function htmlEl(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "className") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
}

// Weight in [0, 1] -> a colour from white through light blue to dark blue.
const STOPS = [
  [0, [255, 255, 255]],
  [0.5, [107, 174, 214]],
  [1, [8, 48, 107]],
];

export function weightColour(w) {
  const x = Math.min(1, Math.max(0, Number.isFinite(w) ? w : 0));
  for (let i = 1; i < STOPS.length; i++) {
    const [x1, c1] = STOPS[i];
    const [x0, c0] = STOPS[i - 1];
    if (x <= x1) {
      const t = (x - x0) / (x1 - x0);
      const rgb = c0.map((v, k) => Math.round(v + t * (c1[k] - v)));
      return `rgb(${rgb.join(",")})`;
    }
  }
  return "rgb(8,48,107)";
}

// Dark cells get light text.
export function textColourOn(w) {
  return w > 0.55 ? "#ffffff" : "#1b1b1b";
}

// A weight as the page shows it everywhere: six decimals (the API's rounding).
export function formatWeight(w) {
  return Number(w).toFixed(6);
}

// A number for the worked examples: whole numbers without decimals, else `digits` decimals.
export function formatNumber(x, digits = 3) {
  return Number.isInteger(x) ? String(x) : Number(x).toFixed(digits);
}

// Width in px that a label of `text` needs.
export function labelWidth(text) {
  return Math.ceil([...String(text)].length * CHAR_WIDTH);
}

// Shorten a long label for display (the tooltip keeps the full text).
export function shortLabel(text, max = 14) {
  const chars = [...String(text)];
  return chars.length <= max ? chars.join("") : `${chars.slice(0, max - 1).join("")}…`;
}
