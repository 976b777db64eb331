"""Is attention an explanation? Tests of how faithful a classifier's token weights are.

After Jain & Wallace 2019 ("Attention is not Explanation", §4) and Wiegreffe & Pinter 2019
("Attention is not not Explanation"):

- **agreement** (J&W §4.1): Kendall tau between the attention weights and two importance
  measures, gradient x input ``|d p_yhat / d e_t . e_t|`` (Simonyan et al. 2014; Shrikumar et
  al. 2017) and leave-one-out ``TVD(p(x), p(x without token t))``;
- **permutation** (J&W §4.2): the output change ``TVD(p, p_perm) = 1/2 sum_c |p_c - p_perm,c|``
  when the attention weights are shuffled over the real tokens, the rest of the model fixed
  (models with one attention pooling layer, :class:`RNNAttentionClassifier`, only);
- **erasure** (Serrano & Smith 2019): how often erasing the most-attended token flips the
  prediction, against erasing a random token;
- **rationale mass**: on the generated data (:mod:`attnkit.apps.classification.rationales`) the
  share of weight
  on the true rationale words, for attention, for TF-IDF weights and for uniform weights.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import kendalltau

from attnkit.apps.classification.data import LabelledText
from attnkit.apps.classification.nets import RNNAttentionClassifier
from attnkit.apps.classification.tokens import Encoded, pad_batch

__all__ = [
    "FaithfulnessRow",
    "attention_and_importance",
    "faithfulness_table",
    "mean_kendall_tau",
    "tvd",
]


@dataclass
class FaithfulnessRow:
    measure: str
    value: float | None
    detail: str = ""


def tvd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Total variation distance ``1/2 sum_c |p_c - q_c|`` over the last axis."""
    return 0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum(axis=-1)


def attention_and_importance(clf, item: Encoded) -> dict[str, np.ndarray]:
    """For one encoded text: ``attention``, ``gradient`` (gradient x input) and ``loo``
    (leave-one-out TVD) per token, and ``probs`` the output distribution."""
    model = clf.model
    captured: list[torch.Tensor] = []

    def keep_output(_module, _inputs, output):
        output.retain_grad()
        captured.append(output)

    handle = model.input_embedding.register_forward_hook(keep_output)
    try:
        with torch.enable_grad():
            out = clf.run([item])
            probs = torch.softmax(out.logits.float(), -1)[0]  # (C,)
            probs[probs.argmax()].backward()
    finally:
        handle.remove()
    n, start = len(item.ids), model.content_offset
    emb = captured[0][0, start : start + n].detach()  # (T, E)
    grad = captured[0].grad[0, start : start + n]  # (T, E)
    gradient = (grad * emb).sum(-1).abs().cpu().numpy()
    model.zero_grad(set_to_none=True)
    p = probs.detach().cpu().numpy()
    erased = clf.probabilities([item.without(i) for i in range(n)]) if n > 1 else p[None]
    return {
        "attention": out.token_weights[0, :n].detach().float().cpu().numpy(),
        "gradient": gradient,
        "loo": tvd(p[None, :], erased),
        "probs": p,
    }


def mean_kendall_tau(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float, int]:
    """Mean Kendall tau-b over pairs of per-token scores (texts of >= 2 tokens), the share of
    texts whose tau is significantly positive (p < 0.05), and how many texts counted."""
    taus, significant = [], 0
    for a, b in pairs:
        if len(a) < 2:
            continue
        tau, pvalue = kendalltau(a, b)
        if np.isnan(tau):
            continue
        taus.append(tau)
        significant += int(pvalue < 0.05 and tau > 0)
    if not taus:
        return float("nan"), float("nan"), 0
    return float(np.mean(taus)), significant / len(taus), len(taus)


@torch.no_grad()
def permutation_tvd(
    clf, items: Sequence[Encoded], n_perm: int = 20, seed: int = 0
) -> np.ndarray | None:
    """Per text, the median TVD over ``n_perm`` random permutations of the attention weights
    (Jain & Wallace 2019, Algorithm 2); None for models without one attention pooling layer."""
    model = clf.model
    if not isinstance(model, RNNAttentionClassifier):
        return None
    gen = torch.Generator().manual_seed(seed)
    medians = []
    for item in items:
        ids, keep = pad_batch([item], clf.tokenizer.pad_id, clf.device)
        h = model.encode(ids, keep)  # (1, T, D)
        _, weights = model.pool(h, keep)  # (1, T)
        p = torch.softmax(model.predict_from(h, weights), -1)
        perms = torch.stack([torch.randperm(h.size(1), generator=gen) for _ in range(n_perm)])
        shuffled = weights[0][perms.to(clf.device)]  # (P, T)
        q = torch.softmax(model.predict_from(h.expand(n_perm, -1, -1), shuffled), -1)  # (P, C)
        medians.append(float(np.median(tvd(p.cpu().numpy(), q.cpu().numpy()))))
    return np.asarray(medians)


def erasure_flip_rates(clf, items: Sequence[Encoded], seed: int = 0) -> tuple[float, float, int]:
    """How often erasing the most-attended token, and a random token, flips the prediction."""
    rng = random.Random(seed)
    usable = [e for e in items if len(e.ids) > 1]
    if not usable:
        return float("nan"), float("nan"), 0
    base = clf.probabilities(usable).argmax(1)
    top, rand = [], []
    for start in range(0, len(usable), 128):
        chunk = usable[start : start + 128]
        with torch.no_grad():
            weights = clf.run(chunk).token_weights.float().cpu().numpy()
        for row, e in enumerate(chunk):
            top.append(e.without(int(weights[row, : len(e.ids)].argmax())))
            rand.append(e.without(rng.randrange(len(e.ids))))
    flip_top = float((clf.probabilities(top).argmax(1) != base).mean())
    flip_rand = float((clf.probabilities(rand).argmax(1) != base).mean())
    return flip_top, flip_rand, len(usable)


def rationale_mass(clf, examples: Sequence[LabelledText], items: Sequence[Encoded], baseline):
    """Mean share of weight on the true rationale words: attention, TF-IDF and uniform."""
    att, tfidf, uniform = [], [], []
    for start in range(0, len(items), 128):
        chunk = items[start : start + 128]
        with torch.no_grad():
            weights = clf.run(chunk).token_weights.float().cpu().numpy()
        for row, e in enumerate(chunk):
            ex = examples[start + row]
            on = np.isin(e.word_ids, ex.rationale)  # (T,) tokens inside rationale words
            att.append(float(weights[row, : len(e.ids)][on].sum()))
            uniform.append(float(on.mean()) if len(on) else 0.0)
            tfidf.append(float(baseline.word_weights(ex.text)[list(ex.rationale)].sum()))
    return float(np.mean(att)), float(np.mean(tfidf)), float(np.mean(uniform))


def faithfulness_table(
    clf, examples: Sequence[LabelledText], *, baseline=None, n_perm: int = 20, seed: int = 0
) -> list[FaithfulnessRow]:
    """Every test above on ``examples``; ``baseline`` (a fitted TF-IDF model) for the rationale
    row, which needs examples with known rationales."""
    items = clf.encode([e.text for e in examples])
    per_text = [attention_and_importance(clf, item) for item in items]
    rows = []
    for name, key in (("gradient x input", "gradient"), ("leave-one-out", "loo")):
        tau, share, n = mean_kendall_tau([(d["attention"], d[key]) for d in per_text])
        rows.append(
            FaithfulnessRow(
                f"Kendall tau: attention vs {name}",
                tau,
                f"mean over {n} texts; {100 * share:.0f}% significantly positive (p < 0.05)",
            )
        )
    perm = permutation_tvd(clf, items, n_perm, seed)
    if perm is None:
        rows.append(
            FaithfulnessRow(
                "permutation: output TVD",
                None,
                "n/a: no single pooling attention to permute in this model",
            )
        )
    else:
        rows.append(
            FaithfulnessRow(
                "permutation: output TVD",
                float(perm.mean()),
                f"median over {n_perm} permutations, mean over {len(perm)} texts; "
                f"{100 * float((perm < 0.01).mean()):.0f}% of texts < 0.01",
            )
        )
    top, rand, n = erasure_flip_rates(clf, items, seed)
    rows.append(FaithfulnessRow("erasure flip rate: most-attended token", top, f"{n} texts"))
    rows.append(FaithfulnessRow("erasure flip rate: random token", rand, f"{n} texts"))
    if all(e.rationale is not None for e in examples) and baseline is not None:
        att, tf, uni = rationale_mass(clf, examples, items, baseline)
        rows.append(FaithfulnessRow("rationale mass: attention", att, f"{len(items)} texts"))
        rows.append(FaithfulnessRow("rationale mass: TF-IDF", tf, "same texts"))
        rows.append(FaithfulnessRow("rationale mass: uniform", uni, "same texts"))
    else:
        rows.append(FaithfulnessRow("rationale mass", None, "n/a: no true rationales in this data"))
    return rows
