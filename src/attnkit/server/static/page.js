// The generic attention page: send an input (a text, or a file's bytes) to POST /api/show,
// then draw the answer's attention as heatmaps (one per stack, a layer at a time, the mean
// over heads) or show its picture. No libraries; nothing is fetched from elsewhere.

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

function drawStack(root, stack) {
  const box = htmlEl("div", { class: "stack" });
  const title = htmlEl("h3", {}, `${stack.stack} attention`);
  const svg = svgEl("svg", { class: "heatmap" });
  const choose = htmlEl("select", { "aria-label": `${stack.stack} layer` });
  stack.layers.forEach((_, l) => choose.append(htmlEl("option", { value: String(l) }, `layer ${l}`)));
  choose.value = String(stack.layers.length - 1);
  const draw = () => {
    const layer = Number(choose.value);
    const caption = `${stack.stack}, layer ${layer}, mean over heads`;
    drawHeatmap(svg, { rows: stack.rows, cols: stack.cols, matrix: stack.layers[layer], caption });
  };
  choose.addEventListener("change", draw);
  box.append(title, htmlEl("label", {}, "Layer "), choose, svg);
  root.append(box);
  draw();
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
  $("#run").textContent = `run ${info.run}`;
  const text = info.input === "text";
  $("#text-input").hidden = !text;
  $("#file-input").hidden = text;
  $("#text").maxLength = info.max_chars;
  if (info.input === "image") $("#file").accept = "image/*";
  if (info.input === "csv") $("#file").accept = ".csv,text/csv";
  $("#show-form").addEventListener("submit", submit);
}

start().catch((error) => showError(error.message));
