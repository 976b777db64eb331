// The generic attention page: send an input (a text, or a file's bytes) to POST /api/show,
// then draw the answer's attention as heatmaps (one per stack, a layer and a head at a time,
// or the mean over heads) or show its picture. No libraries; nothing is fetched from elsewhere.

import { drawHeatmap } from "./heatmap.js";
import { clear, htmlEl, svgEl } from "./svg.js";

const $ = (selector) => document.querySelector(selector);
let info = null;

function showError(message) {
  $("#error").textContent = message;
  $("#error").hidden = !message;
}

async function request() {
  if (info.input === "text") {
    const body = JSON.stringify({ text: $("#text").value });
    return fetch("/api/show", { method: "POST", headers: { "Content-Type": "application/json" }, body });
  }
  const file = $("#file").files[0];
  if (!file) throw new Error("choose a file to show");
  const url = `/api/show?name=${encodeURIComponent(file.name)}`;
  const headers = { "Content-Type": file.type || "application/octet-stream" };
  return fetch(url, { method: "POST", headers, body: file });
}

// The head menu of one layer: the mean, then every head the answer carries for it.
function fillHeads(choose, heads) {
  const before = choose.value;
  clear(choose);
  choose.append(htmlEl("option", { value: "mean" }, "mean over heads"));
  const option = (h) => htmlEl("option", { value: String(h) }, `head ${h}`);
  (heads || []).forEach((_, h) => choose.append(option(h)));
  const kept = heads && /^\d+$/.test(before) && Number(before) < heads.length;
  choose.value = kept ? before : "mean";
  choose.disabled = !heads;
}

function drawStack(root, stack) {
  const box = htmlEl("div", { class: "stack", "data-stack": stack.stack });
  const title = htmlEl("h3", {}, `${stack.stack} attention`);
  const svg = svgEl("svg", { class: "heatmap" });
  const first = stack.first_layer || 0;
  const heads = stack.heads || [];
  const layerMenu = htmlEl("select", { class: "layer", "aria-label": `${stack.stack} layer` });
  const headMenu = htmlEl("select", { class: "head", "aria-label": `${stack.stack} head` });
  stack.layers.forEach((_, l) =>
    layerMenu.append(htmlEl("option", { value: String(l) }, `layer ${first + l}`)),
  );
  layerMenu.value = String(stack.layers.length - 1);
  const draw = () => {
    const l = Number(layerMenu.value);
    const mean = headMenu.value === "mean" || !heads[l];
    const matrix = mean ? stack.layers[l] : heads[l][Number(headMenu.value)];
    const which = mean ? "mean over heads" : `head ${headMenu.value}`;
    const caption = `${stack.stack}, layer ${first + l}, ${which}`;
    drawHeatmap(svg, { rows: stack.rows, cols: stack.cols, matrix, caption });
  };
  layerMenu.addEventListener("change", () => {
    fillHeads(headMenu, heads[Number(layerMenu.value)]);
    draw();
  });
  headMenu.addEventListener("change", draw);
  fillHeads(headMenu, heads[Number(layerMenu.value)]);
  const menus = [htmlEl("label", {}, "Layer "), layerMenu, htmlEl("label", {}, " Head "), headMenu];
  box.append(title, ...menus, svg);
  root.append(box);
  draw();
}

// What the answer left out to stay within the server's limit, in words (or "").
function leftOut(answer) {
  const parts = [];
  const layers = answer.layers_left_out || 0;
  const heads = answer.heads_left_out || 0;
  if (layers) parts.push(`${layers} layer${layers === 1 ? "" : "s"} nearest the input`);
  if (heads) parts.push(`the single heads of ${heads} layer${heads === 1 ? "" : "s"} (mean only)`);
  if (!parts.length) return "";
  return `Left out to stay within ${info.max_weights} weights: ${parts.join("; ")}.`;
}

function render(answer) {
  $("#result").hidden = false;
  $("#output").textContent = answer.output;
  clear($("#details"));
  for (const [name, value] of Object.entries(answer.details || {})) {
    $("#details").append(htmlEl("dt", {}, name), htmlEl("dd", {}, JSON.stringify(value)));
  }
  clear($("#stacks"));
  for (const stack of answer.attention) drawStack($("#stacks"), stack);
  $("#left-out").textContent = leftOut(answer);
  $("#left-out").hidden = !$("#left-out").textContent;
  $("#picture").hidden = !answer.picture;
  if (answer.picture) $("#picture").src = `data:image/png;base64,${answer.picture}`;
}

async function submit(event) {
  event.preventDefault();
  showError("");
  $("#show-btn").disabled = true;
  try {
    const response = await request();
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `status ${response.status}`);
    render(answer);
  } catch (error) {
    showError(error.message);
  } finally {
    $("#show-btn").disabled = false;
  }
}

async function start() {
  info = await (await fetch("/api/info")).json();
  $("#title").textContent = `${info.title}: attention`;
  $("#run").textContent = info.source || `run ${info.run}`;
  const text = info.input === "text";
  $("#text-input").hidden = !text;
  $("#file-input").hidden = text;
  $("#text").maxLength = info.max_chars;
  if (info.input === "image") $("#file").accept = "image/*";
  if (info.input === "csv") $("#file").accept = ".csv,text/csv";
  if (info.input === "audio") $("#file").accept = "audio/*,.wav,.flac";
  $("#show-form").addEventListener("submit", submit);
  document.body.dataset.ready = "true";
}

start().catch((error) => showError(error.message));
