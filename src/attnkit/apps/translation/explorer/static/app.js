// The attention explorer page: translate a sentence, then look at its attention as a heatmap
// and as alignment lines, one output step at a time if you like. Vanilla JS, no libraries.

import { renderExamples } from "./examples.js";
import { exportPng, exportSvg } from "./export.js";
import { drawHeatmap } from "./heatmap.js";
import { drawLines } from "./lines.js";
import { renderHypotheses, renderOutput, renderStepInfo } from "./panels.js";
import { clear, htmlEl } from "./svg.js";
import { attachTooltip } from "./tooltip.js";

const $ = (selector) => document.querySelector(selector);

const state = {
  info: null, // GET /api/info
  payload: null, // the last POST /api/translate answer
  result: null, // the hypothesis shown: the payload with one of its hypotheses' fields
  hyp: 0, // which hypothesis of the beam is shown (0 = the best)
  example: null, // a worked example's view, when that is what the pictures show
  viewName: null, // which attention of the result: "cross", "layer1.cross", ...
  head: "mean", // "mean" or a head index
  step: 0, // output rows revealed
  filter: { mode: "threshold", value: 0.2 },
  timer: null, // the "play" interval
};

// ------------------------------------------------------------------------------- data

async function getJson(url, options) {
  const response = await fetch(url, options);
  let body;
  try {
    body = await response.json();
  } catch {
    throw new Error(`${response.status} ${response.statusText}: the answer was not JSON`);
  }
  if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
  return body;
}

// The mean over heads, rounded like the API's numbers (6 decimals).
function meanOfHeads(heads) {
  const n = heads.length;
  return heads[0].map((row, i) =>
    row.map((_, j) => Math.round((heads.reduce((s, h) => s + h[i][j], 0) / n) * 1e6) / 1e6),
  );
}

// What the pictures show now: {rows, cols, matrix, caption, rowTitle, colTitle}, or null.
function currentView() {
  if (state.example) return state.example;
  const result = state.result;
  if (!result || !state.viewName) return null;
  const entry = result.attention[state.viewName];
  const count = entry.heads.length;
  const head = count > 1 ? state.head : "0";
  const matrix = head === "mean" ? meanOfHeads(entry.heads) : entry.heads[Number(head)];
  let which = "";
  if (count > 1) which = head === "mean" ? `, mean of ${count} heads` : `, head ${head}`;
  return {
    rows: entry.rows,
    cols: entry.cols,
    matrix,
    caption: `${state.viewName}${which}`,
    rowTitle: "output (one row per decoding step)",
    colTitle: entry.kind === "self" ? "decoder input (self-attention)" : "source",
  };
}

// --------------------------------------------------------------------------- drawing

function render() {
  const view = currentView();
  $("#pictures").hidden = view === null;
  for (const id of ["#export-svg", "#export-png"]) $(id).disabled = view === null;
  if (view === null) return;
  const total = view.rows.length;
  state.step = Math.min(Math.max(state.step, 0), total);
  drawHeatmap($("#heatmap"), view, state.step);
  drawLines($("#lines"), view, state.filter, state.step);
  $("#picture-title").textContent = view.caption;
  const range = $("#step-range");
  range.max = String(total);
  range.value = String(state.step);
  $("#step-label").textContent = `step ${state.step} of ${total}`;
  $("#step-first").disabled = $("#step-prev").disabled = state.step <= 0;
  $("#step-last").disabled = $("#step-next").disabled = state.step >= total;
  renderOutput($("#output"), view, state.step);
  const steps = state.example ? null : state.result?.steps;
  renderStepInfo($("#step-info"), view, state.step, steps?.[state.step - 1] ?? null);
}

// Shift-Att (Chen et al. 2020): beside each cross-attention, a view whose row k is step k + 1,
// the step where output k is the decoder's input; the last row, read by no step, is 0.
function addShiftViews(attention) {
  for (const [name, entry] of Object.entries(attention)) {
    if (entry.kind !== "cross" || entry.shift) continue;
    const heads = entry.heads.map((rows) => [...rows.slice(1), rows[0].map(() => 0)]);
    attention[`${name} (shift)`] = { ...entry, shift: true, heads };
  }
}

function populateSelectors(result) {
  addShiftViews(result.attention);
  const names = Object.keys(result.attention);
  const layerOf = (name) => result.attention[name].layer ?? -1;
  const cross = names.filter(
    (name) => result.attention[name].kind === "cross" && !result.attention[name].shift,
  );
  const byLayer = (cross.length ? cross : names).sort((a, b) => layerOf(a) - layerOf(b));
  state.viewName = byLayer.at(-1) ?? null; // the last layer's cross-attention
  const select = $("#view");
  clear(select);
  for (const name of names) select.append(htmlEl("option", { value: name }, name));
  if (state.viewName) select.value = state.viewName;
  showSelectors();
}

// The layer and head pickers, shown only when there is a choice.
function showSelectors() {
  $("#view-box").hidden = Object.keys(state.result.attention).length < 2;
  const select = $("#head");
  clear(select);
  const count = state.result.attention[state.viewName]?.heads.length ?? 1;
  select.append(htmlEl("option", { value: "mean" }, `mean of ${count} heads`));
  for (let h = 0; h < count; h++) select.append(htmlEl("option", { value: h }, `head ${h}`));
  if (state.head !== "mean" && Number(state.head) >= count) state.head = "mean";
  select.value = String(state.head);
  $("#head-box").hidden = count < 2;
}

// --------------------------------------------------------------------------- actions

function setStatus(message, kind = "info") {
  const status = $("#status");
  status.textContent = message;
  status.className = `status ${kind}`;
}

async function translate(event) {
  event?.preventDefault();
  stopPlaying();
  const button = $("#translate-btn");
  button.disabled = true;
  setStatus("Translating…", "busy");
  try {
    const body = JSON.stringify({ text: $("#text").value, beam: Number($("#beam").value) });
    const result = await getJson("/api/translate", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
    });
    state.payload = result;
    state.example = null;
    $("#back-to-translation").hidden = true;
    selectHypothesis(0);
    setStatus(result.output, "done");
    render();
  } catch (error) {
    setStatus(error.message, "error");
  } finally {
    button.disabled = false;
  }
}

// Show hypothesis `k` of the beam: its output, attention and steps, from step 0 to the end.
function selectHypothesis(k) {
  stopPlaying();
  const payload = state.payload;
  const hyp = payload.hypotheses[k];
  state.hyp = k;
  state.result = { ...payload, ...hyp, output: hyp.text, hypotheses: payload.hypotheses };
  state.example = null;
  state.step = state.result.rows.length;
  const keep = state.viewName;
  populateSelectors(state.result);
  if (keep && keep in state.result.attention) {
    state.viewName = keep;
    $("#view").value = keep;
    showSelectors();
  }
  renderHypotheses($("#hypotheses-box"), $("#hypotheses"), payload.hypotheses, k, selectHypothesis);
  $("#translation").textContent = state.result.output;
  render();
}

function setStep(step) {
  state.step = step;
  render();
}

function stopPlaying() {
  if (state.timer !== null) clearInterval(state.timer);
  state.timer = null;
  $("#step-play").textContent = "▶ play";
}

function play() {
  if (state.timer !== null) return stopPlaying();
  const total = currentView()?.rows.length ?? 0;
  if (state.step >= total) setStep(0);
  $("#step-play").textContent = "❚❚ pause";
  const advance = () => (state.step >= total ? stopPlaying() : setStep(state.step + 1));
  state.timer = setInterval(advance, 700);
}

function updateFilterControls() {
  const range = $("#filter");
  const topk = state.filter.mode === "topk";
  range.min = topk ? "1" : "0";
  range.max = topk ? String(Math.max(1, currentView()?.cols.length ?? 5)) : "1";
  range.step = topk ? "1" : "0.01";
  range.value = String(state.filter.value);
  const value = Number(state.filter.value);
  $("#filter-value").textContent = topk ? `top ${value}` : `≥ ${value.toFixed(2)}`;
}

function setFilter(filter) {
  state.filter = filter;
  updateFilterControls();
  render();
}

function showExampleView(view) {
  stopPlaying();
  state.example = view;
  state.step = view.rows.length;
  $("#view-box").hidden = $("#head-box").hidden = true;
  $("#back-to-translation").hidden = state.result === null;
  render();
  if (document.body.dataset.ready === "true") $("#pictures").scrollIntoView({ block: "start" });
}

function backToTranslation() {
  stopPlaying();
  state.example = null;
  state.step = state.result.rows.length;
  $("#back-to-translation").hidden = true;
  showSelectors(); // keeps the chosen layer and head
  render();
}

function wire() {
  $("#translate-form").addEventListener("submit", translate);
  $("#text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) translate(event);
  });
  $("#view").addEventListener("change", (event) => {
    state.viewName = event.target.value;
    showSelectors();
    render();
  });
  $("#head").addEventListener("change", (event) => {
    state.head = event.target.value;
    render();
  });
  $("#filter-mode").addEventListener("change", (event) => {
    const topk = event.target.value === "topk";
    setFilter(topk ? { mode: "topk", value: 1 } : { mode: "threshold", value: 0.2 });
  });
  $("#filter").addEventListener("input", (event) => {
    setFilter({ ...state.filter, value: Number(event.target.value) });
  });
  $("#back-to-translation").addEventListener("click", backToTranslation);
  $("#step-first").addEventListener("click", () => setStep(0));
  $("#step-prev").addEventListener("click", () => setStep(state.step - 1));
  $("#step-next").addEventListener("click", () => setStep(state.step + 1));
  $("#step-last").addEventListener("click", () => setStep(Number.MAX_SAFE_INTEGER));
  $("#step-play").addEventListener("click", play);
  $("#step-range").addEventListener("input", (event) => setStep(Number(event.target.value)));
  attachTooltip($("#tooltip"), [$("#heatmap"), $("#lines")], $("#heatmap"), currentView);
  $("#export-svg").addEventListener("click", () => {
    exportSvg($("#heatmap"), "attention-heatmap.svg");
  });
  $("#export-png").addEventListener("click", () => {
    const failed = (error) => setStatus(error.message, "error");
    exportPng($("#heatmap"), "attention-heatmap.png").catch(failed);
  });
}

async function start() {
  wire();
  updateFilterControls();
  try {
    const info = (state.info = await getJson("/api/info"));
    $("#text").maxLength = info.max_chars;
    $("#beam").max = String(info.max_beam);
    if (info.mode === "run") {
      $("#beam").value = String(info.beam);
      const model = `${info.arch} (${info.attention})`;
      $("#mode").textContent = `${info.name}: ${model}, ${info.languages.join(" → ")}`;
    } else {
      $("#mode").textContent = "demo: worked examples only";
      $("#translate-form").hidden = true;
      $("#demo-note").hidden = false;
    }
    const { examples } = await getJson("/api/examples");
    renderExamples($("#examples"), examples, showExampleView);
    if (info.mode === "demo" && examples.length) $("#example-heatmap").click();
    document.body.dataset.ready = "true";
  } catch (error) {
    setStatus(`Could not start: ${error.message}`, "error");
  }
}

start();
