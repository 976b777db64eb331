// Text beside the pictures: the output tokens revealed so far, what happened at the current
// step, and the beam's best hypotheses.

import { clear, formatWeight, htmlEl } from "./svg.js";

// 0.951, 0.034, or 2e-5 for the very small.
function probability(p) {
  return p >= 0.001 || p === 0 ? p.toFixed(3) : p.toExponential(0);
}

// The output pieces, `step` of them revealed; the last revealed one is "current".
export function renderOutput(out, view, step) {
  clear(out);
  view.rows.forEach((piece, i) => {
    let cls = "piece future";
    if (i < step) cls = i === step - 1 ? "piece current" : "piece";
    out.append(htmlEl("span", { className: cls, dataset: { row: i } }, piece));
  });
}

// The current step: the chosen token, its probability and alternatives (stepInfo, from the
// API's "steps"; null for a worked example) and the most attended columns.
export function renderStepInfo(box, view, step, stepInfo) {
  clear(box);
  if (step < 1) {
    const hint = "Step 0: nothing produced yet. Press ▶ to reveal the first token.";
    box.append(htmlEl("p", {}, hint));
    return;
  }
  const i = step - 1;
  const top = view.matrix[i]
    .map((w, j) => [w, j])
    .sort((a, b) => b[0] - a[0])
    .slice(0, 3)
    .map(([w, j]) => `${view.cols[j]} ${formatWeight(w)}`);
  if (stepInfo) {
    const alts = stepInfo.alternatives.map(([p, prob]) => `${p} ${probability(prob)}`).join(", ");
    box.append(
      htmlEl(
        "p",
        {},
        `Step ${step}: the model chose “${stepInfo.token}” with probability `,
        htmlEl("strong", {}, probability(stepInfo.prob)),
        alts ? `; next most likely: ${alts}.` : ".",
      ),
    );
  } else {
    box.append(htmlEl("p", {}, `Row ${step}: “${view.rows[i]}”.`));
  }
  box.append(htmlEl("p", {}, `Most attended: ${top.join(", ")}.`));
}

// The n-best list of a beam search (shown when there is more than one hypothesis). Each entry
// is a button: choosing one shows that hypothesis' attention and steps (`onSelect(k)`).
export function renderHypotheses(box, list, hypotheses, selected = 0, onSelect = null) {
  clear(list);
  hypotheses.forEach((h, k) => {
    const flag = h.finished ? "" : " (cut at the length limit)";
    const text = htmlEl("span", { className: "hyp-text" }, h.text);
    const button = htmlEl(
      "button",
      { type: "button", className: "hyp", dataset: { hyp: k } },
      text,
      ` ${h.score}${flag}`,
    );
    button.setAttribute("aria-pressed", String(k === selected));
    if (onSelect) button.addEventListener("click", () => onSelect(k));
    list.append(htmlEl("li", {}, button));
  });
  box.hidden = hypotheses.length < 2;
}
