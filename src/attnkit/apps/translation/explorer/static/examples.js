// The lecture's worked examples (GET /api/examples): pick an example, click a word, and see
// its attention computed step by step: scores q·k, scaled by 1/√d_k, softmax, weighted sum.

import { clear, formatNumber, htmlEl } from "./svg.js";

function digitsFor(example) {
  return example.d_k >= 64 ? 2 : 3; // the lecture prints the two-word example to 2 decimals
}

function vector(values, digits) {
  return `(${values.map((v) => formatNumber(v, digits)).join(", ")})`;
}

// The table of one query's computation: a row per key, a column per step.
export function computationTable(example, i) {
  const digits = digitsFor(example);
  const scaled = example.scale !== null && example.scale !== undefined;
  const softmax = example.normaliser === "softmax";
  const row = example.scaled_scores[i];
  const peak = Math.max(...row);
  const exps = row.map((s) => Math.exp(s - peak)); // shifted: same ratios, no overflow
  const total = exps.reduce((a, b) => a + b, 0);
  const head = htmlEl(
    "tr",
    {},
    htmlEl("th", { scope: "col" }, "key"),
    htmlEl("th", { scope: "col" }, "1. score q·k"),
    scaled ? htmlEl("th", { scope: "col" }, `2. × 1/√${example.d_k}`) : null,
    softmax ? htmlEl("th", { scope: "col" }, "exp(s − max)") : null,
    htmlEl("th", { scope: "col" }, `${scaled ? 3 : 2}. ${example.normaliser}`),
    htmlEl("th", { scope: "col" }, `${scaled ? 4 : 3}. weight × value`),
  );
  const body = example.key_tokens.map((key, j) => {
    const w = example.weights[i][j];
    const weighted = example.values[j].map((v) => w * v);
    return htmlEl(
      "tr",
      { className: "key-row", dataset: { key: j } },
      htmlEl("th", { scope: "row" }, key),
      htmlEl("td", { className: "score" }, formatNumber(example.scores[i][j], digits)),
      scaled ? htmlEl("td", { className: "scaled" }, formatNumber(row[j], digits)) : null,
      softmax ? htmlEl("td", { className: "exp" }, exps[j].toPrecision(4)) : null,
      htmlEl("td", { className: "weight", title: String(w) }, formatNumber(w, digits)),
      htmlEl("td", { className: "weighted" }, vector(weighted, digits)),
    );
  });
  const context = example.context[i];
  const foot = htmlEl(
    "tr",
    {},
    htmlEl("th", { scope: "row" }, "sum"),
    htmlEl("td"),
    scaled ? htmlEl("td") : null,
    softmax ? htmlEl("td", {}, total.toPrecision(4)) : null,
    htmlEl("td", {}, formatNumber(example.weights[i].reduce((a, b) => a + b, 0), digits)),
    htmlEl("td", { className: "context" }, vector(context, digits)),
  );
  return htmlEl(
    "table",
    { className: "computation" },
    htmlEl("thead", {}, head),
    htmlEl("tbody", {}, ...body),
    htmlEl("tfoot", {}, foot),
  );
}

function explanation(example, i) {
  const query = example.query_tokens[i];
  const scaled = example.scale !== null && example.scale !== undefined;
  const parts = [
    `Query “${query}” against every key: 1. the score is the dot product q·k`,
    scaled ? `; 2. scaled by 1/√d_k = 1/√${example.d_k}` : "",
    `; then ${example.normaliser} turns the scores into weights that sum to 1`,
    softmaxNote(example),
    "; finally the context is the weighted sum of the values.",
  ];
  return parts.join("");
}

function softmaxNote(example) {
  return example.normaliser === "softmax" ? " (each exp divided by their sum)" : "";
}

// Fill `root` with the example picker, the word buttons and the computation panel.
// onShow(view) is called with a heatmap view of the chosen example's weights.
export function renderExamples(root, examples, onShow) {
  const picker = root.querySelector("#example");
  const words = root.querySelector("#example-words");
  const note = root.querySelector("#example-note");
  const panel = root.querySelector("#computation");
  clear(picker);
  examples.forEach((example, k) => picker.append(htmlEl("option", { value: k }, example.title)));

  function showWord(example, i) {
    for (const b of words.querySelectorAll(".word")) {
      b.setAttribute("aria-pressed", String(Number(b.dataset.index) === i));
    }
    clear(panel);
    panel.append(htmlEl("p", { className: "explanation" }, explanation(example, i)));
    panel.append(computationTable(example, i));
  }

  function showExample(k) {
    const example = examples[k];
    note.textContent = example.note;
    clear(words);
    example.query_tokens.forEach((token, i) => {
      const button = htmlEl(
        "button",
        { type: "button", className: "word", dataset: { index: i }, "aria-pressed": "false" },
        token,
      );
      button.addEventListener("click", () => showWord(example, i));
      words.append(button);
    });
    showWord(example, 0);
  }

  picker.addEventListener("change", () => showExample(Number(picker.value)));
  root.querySelector("#example-heatmap").addEventListener("click", () => {
    const example = examples[Number(picker.value)];
    onShow({
      rows: example.query_tokens,
      cols: example.key_tokens,
      matrix: example.weights,
      caption: `${example.title}: ${example.normaliser} weights`,
      rowTitle: "queries",
      colTitle: "keys",
    });
  });
  if (examples.length) showExample(0);
}
