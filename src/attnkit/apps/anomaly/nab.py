"""The Numenta Anomaly Benchmark score (Lavin & Ahmad 2015, "Evaluating real-time anomaly
detection algorithms - the Numenta Anomaly Benchmark", §IV and NAB's scoring rules), and
point-wise / event-wise F1 and ROC-AUC for labelled data.

NAB scores a detector's binary detections ``score >= threshold`` row by row, in file order:

- The first ``min(floor(0.15 T), 750)`` rows of each file are the probationary period; nothing
  there counts (NAB ``sweeper._getProbationaryLength``).
- A window is rewarded for its earliest detection only, by the scaled sigmoid
  ``sigma(y) = 2 / (1 + exp(5 y)) - 1`` (paper eq. (1) with the profile's weights) of the
  relative position ``y = -(right - i + 1) / width`` (``y = -1`` at the window's first row),
  divided by ``sigma(-1)`` so the earliest detection earns exactly ``A_TP``.
- A window with no detection costs ``-A_FN``.
- Every detection outside the windows costs ``A_FP * sigma(y)`` with ``y = (i - right) /
  (width - 1)`` relative to the preceding window (``-A_FP`` before the first window, and
  ``sigma = -1`` for ``y >= 3``): a detection just after a window costs almost nothing.
- One threshold per detector and profile is chosen to maximise the summed raw score over the
  corpus (NAB's threshold sweep), and the result is normalised
  ``100 (S - S_null) / (S_perfect - S_null)`` (paper eq. (3)): ``S_perfect = A_TP x windows``,
  ``S_null`` the optimised score of a detector that outputs a constant 0.5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

PROBATION = 0.15


@dataclass(frozen=True)
class Profile:
    """A NAB application profile: the weights ``A_TP, A_FP, A_FN`` (NAB config/profiles.json)."""

    tp: float
    fp: float
    fn: float


PROFILES: dict[str, Profile] = {
    "standard": Profile(1.0, 0.11, 1.0),
    "reward_low_FP_rate": Profile(1.0, 0.22, 1.0),
    "reward_low_FN_rate": Profile(1.0, 0.11, 2.0),
}


def scaled_sigmoid(y: float | np.ndarray) -> np.ndarray:
    """``2 / (1 + exp(5 y)) - 1`` for ``y < 3``, else ``-1`` (NAB ``scaledSigmoid``)."""
    y = np.asarray(y, dtype=np.float64)
    return np.where(y >= 3.0, -1.0, 2.0 / (1.0 + np.exp(np.clip(5.0 * y, -50, 50))) - 1.0)


def probationary_length(n_rows: int, fraction: float = PROBATION) -> int:
    """``min(floor(fraction * T), fraction * 5000)`` rows (NAB ``_getProbationaryLength``)."""
    return int(min(math.floor(fraction * n_rows), fraction * 5000))


def row_weights(n_rows: int, windows: list[tuple[int, int]], profile: Profile):
    """What a detection at each row would earn, and the window each row belongs to.

    Returns ``(weights (T,), window_id (T,))``: ``window_id`` is the window's index, ``-1``
    outside every window and ``-2`` in the probationary period (where nothing counts).
    """
    i = np.arange(n_rows)
    weights = np.empty(n_rows)
    window_id = np.full(n_rows, -1)
    max_tp = float(scaled_sigmoid(-1.0))
    prev_right, prev_width = None, None
    cursor = 0
    for w, (first, last) in enumerate(sorted(windows)):
        before = slice(cursor, first)
        weights[before] = _outside(i[before], prev_right, prev_width) * profile.fp
        width = float(last - first + 1)
        inside = i[first : last + 1]
        weights[first : last + 1] = (
            scaled_sigmoid(-(last - inside + 1) / width) * profile.tp / max_tp
        )
        window_id[first : last + 1] = w
        prev_right, prev_width, cursor = last, width, last + 1
    weights[cursor:] = _outside(i[cursor:], prev_right, prev_width) * profile.fp
    window_id[: probationary_length(n_rows)] = -2
    return weights, window_id


def _outside(i: np.ndarray, prev_right: int | None, prev_width: float | None) -> np.ndarray:
    if prev_right is None:
        return np.full(i.shape, -1.0)
    return scaled_sigmoid(np.abs(prev_right - i) / max(prev_width - 1.0, 1.0))


@dataclass
class FileScore:
    """One file's raw score at a threshold and its counts of windows and detections."""

    score: float
    tp: int  # windows detected
    fn: int  # windows missed
    fp: int  # detections outside windows (after the probationary period)


def score_file(scores, windows, threshold: float, profile: Profile) -> FileScore:
    """NAB's raw score of one file whose detector output ``scores (T,)`` is thresholded at
    ``threshold`` (a detection is ``score >= threshold``)."""
    scores = np.asarray(scores, dtype=np.float64)
    weights, wid = row_weights(len(scores), windows, profile)
    hit = scores >= threshold
    fp_rows = hit & (wid == -1)
    total, tp, fn = float(weights[fp_rows].sum()), 0, 0
    for w in np.unique(wid[wid >= 0]):
        rows = (wid == w) & hit
        if rows.any():
            total += float(weights[rows].max())  # the earliest detection earns the most
            tp += 1
        else:
            total -= profile.fn
            fn += 1
    return FileScore(total, tp, fn, int(fp_rows.sum()))


def optimise_threshold(files, profile: Profile) -> tuple[float, float]:
    """The threshold that maximises the corpus' summed raw score, and that score.

    ``files``: a list of ``(scores (T,), windows)``. Every distinct score is a candidate, as in
    NAB's sweep (``Sweeper.calcScoreByThreshold``), plus one above all scores (no detection).
    """
    all_scores, all_weights, all_window = [], [], []
    offset = 0
    n_windows = 0
    for scores, windows in files:
        weights, wid = row_weights(len(scores), windows, profile)
        keep = wid != -2
        n_windows += len(np.unique(wid[wid >= 0]))
        all_scores.append(np.asarray(scores, dtype=np.float64)[keep])
        all_weights.append(weights[keep])
        all_window.append(np.where(wid[keep] >= 0, wid[keep] + offset, -1))
        offset += len(windows)
    s, wt, win = (np.concatenate(a) for a in (all_scores, all_weights, all_window))
    order = np.argsort(-s, kind="stable")
    s, wt, win = s[order], wt[order], win[order]
    best = np.full(offset, -profile.fn)  # each window's contribution so far
    total = -profile.fn * n_windows
    best_score, best_threshold = total, float(s[0] + 1.0) if len(s) else 1.0
    n = len(s)
    k = 0
    while k < n:
        j = k
        while j < n and s[j] == s[k]:  # every row at this score is detected together
            if win[j] < 0:
                total += wt[j]
            elif wt[j] > best[win[j]]:
                total += wt[j] - best[win[j]]
                best[win[j]] = wt[j]
            j += 1
        if total > best_score:
            best_score, best_threshold = total, float(s[k])
        k = j
    return best_threshold, best_score


@dataclass
class NABResult:
    """A detector's NAB result for one profile."""

    profile: str
    score: float  # normalised: 0 = null detector, 100 = perfect
    raw: float
    null: float
    perfect: float
    threshold: float
    tp: int
    fn: int
    fp: int


def nab_score(files, profile: str = "standard", threshold: float | None = None) -> NABResult:
    """The normalised NAB score of a detector over a corpus.

    Args:
        files: a list of ``(scores (T,), windows)``, one per file, ``scores`` in file order
            (each computed causally from the rows up to it), ``windows`` inclusive row ranges.
        profile: a key of :data:`PROFILES`.
        threshold: a fixed threshold; ``None`` optimises it as NAB does.

    Raises ``ValueError`` when no file has a labelled window (nothing to normalise by).
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown NAB profile {profile!r}; choose one of {', '.join(PROFILES)}")
    weights = PROFILES[profile]
    if not any(len(w) for _, w in files):  # eq. (3) would divide 0 by 0
        raise ValueError(
            f"no labelled anomaly windows in these {len(files)} series: the NAB score needs "
            "labels (score unlabelled series by their flagged rows instead)"
        )
    if threshold is None:
        threshold, _ = optimise_threshold(files, weights)
    parts = [score_file(s, w, threshold, weights) for s, w in files]
    raw = sum(p.score for p in parts)
    _, null = optimise_threshold([(np.full(len(s), 0.5), w) for s, w in files], weights)
    perfect = weights.tp * sum(len(w) for _, w in files)
    normalised = 100.0 * (raw - null) / (perfect - null)
    return NABResult(
        profile,
        normalised,
        raw,
        null,
        perfect,
        threshold,
        sum(p.tp for p in parts),
        sum(p.fn for p in parts),
        sum(p.fp for p in parts),
    )


# -- point-wise and event-wise measures -------------------------------------------------------


def pointwise_scores(labels, scores, threshold: float) -> dict[str, float]:
    """Point-wise precision, recall, F1 (rows ``score >= threshold``) and ROC-AUC (sklearn)."""
    from sklearn.metrics import f1_score, precision_score, recall_score, roc_auc_score

    labels = np.asarray(labels, dtype=bool)
    pred = np.asarray(scores) >= threshold
    return {
        "precision": float(precision_score(labels, pred, zero_division=0)),
        "recall": float(recall_score(labels, pred, zero_division=0)),
        "f1": float(f1_score(labels, pred, zero_division=0)),
        "roc_auc": float(roc_auc_score(labels, scores))
        if 0 < labels.sum() < len(labels)
        else float("nan"),
    }


def eventwise_scores(windows, scores, threshold: float) -> dict[str, float]:
    """Event-wise F1: a window is found when any of its rows is detected (recall over windows);
    precision is the share of detected *events* (maximal runs of detections) that touch a
    window."""
    pred = np.asarray(scores) >= threshold
    labels = np.zeros(len(pred), dtype=bool)
    for first, last in windows:
        labels[first : last + 1] = True
    found = sum(bool(pred[first : last + 1].any()) for first, last in windows)
    edges = np.diff(np.concatenate([[0], pred.astype(int), [0]]))
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    true_events = sum(bool(labels[a:b].any()) for a, b in zip(starts, ends, strict=True))
    recall = found / len(windows) if windows else 0.0
    precision = true_events / len(starts) if len(starts) else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "events": int(len(starts))}
