"""The explorer's JSON payloads: a translation with its attention, and the worked examples.

Pure functions of a loaded model, kept apart from the HTTP plumbing in :mod:`.app` so they can be
tested and reused without a server.

A translation (``POST /api/translate``) is returned as::

    {
      "source": str, "output": str, "score": float, "finished": bool, "beam": int,
      "arch": "rnn" | "transformer",
      "src_pieces": [S],            # subwords of the source
      "tgt_pieces": [T],            # subwords of the best output (no BOS/EOS)
      "rows": [T_out],              # one label per decoding step: tgt_pieces (+ "</s>")
      "attention": {name: {"kind": "cross" | "self", "layer": int | None,
                           "rows": [T_out], "cols": src_pieces or decoder inputs,
                           "head_ids": [H],  # which of the model's heads "heads" holds
                           "heads": [H][T_out][S or T_out]}},
      "steps": [T_out] of {"token", "prob", "alternatives": [[piece, prob], ...]},
      "hypotheses": [{"text", "score", "finished", "tgt_pieces", "rows", "attention",
                      "steps"}]     # the beam's n-best, best first; [0] is the top level's
    }

``T_out = T + 1`` when the output ended with EOS (that step has a row too), else ``T``.
Attention names are the model's (:mod:`attnkit.modules.seq2seq`): ``"cross"`` for the recurrent
models, ``"layer{l}.self"`` / ``"layer{l}.cross"`` for the Transformer; a request's ``layers``
and ``heads`` keep only those (:mod:`.request`), and the answer's size is bounded by
:class:`~.limits.ExplorerLimits` (:mod:`.budget`: the beam before the search, the hypotheses
returned after it). Decoder
self-attention at step ``t`` attends over the decoder inputs ``<s>, y_1 .. y_t``; its columns
are labelled so. Weights are rounded to :data:`DIGITS` decimals (float32 carries about 7
significant digits), which keeps the JSON small and is the number the page shows.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from attnkit import devices
from attnkit.apps.translation.explorer import budget
from attnkit.apps.translation.explorer.limits import LIMITS, ExplorerLimits, RequestError
from attnkit.apps.translation.explorer.request import Request, parse_request
from attnkit.interpret.explain import builtin_examples

__all__ = ["Request", "RequestError", "parse_request", "translate_payload", "info_payload"]

DIGITS = 6
MAX_BEAM = LIMITS.max_beam
EOS_LABEL, BOS_LABEL = "</s>", "<s>"
ALTERNATIVES = 3  # the most likely other tokens shown per step


def _rounded(weights: torch.Tensor) -> list:
    """``(H, T, K)`` float tensor -> nested lists rounded to :data:`DIGITS` decimals."""
    return np.round(weights.detach().double().cpu().numpy(), DIGITS).tolist()


def select(
    attention: dict[str, torch.Tensor], layers=None, heads=None
) -> dict[str, tuple[list[int], torch.Tensor]]:
    """Keep the names of ``layers`` and the ``heads`` (None: all): ``{name: (head_ids, (H', T_out,
    K))}``, the heads in the order asked for. The page shows the decoder's steps: the
    encoder's self-attention (``encoder.layer{l}``, recorded too) is left out."""
    kept = {}
    for name, weights in attention.items():  # (H, T_out, K)
        if not budget.on_page(name):
            continue
        layer = budget.LAYER.match(name)
        if layers is not None and (layer is None or int(layer.group(1)) not in layers):
            continue
        ids = (
            list(range(weights.shape[0]))
            if heads is None
            else [h for h in heads if h < len(weights)]
        )
        kept[name] = (ids, weights[ids])  # (H', T_out, K)
    return kept


def attention_views(attention: dict, rows: list[str], src: list[str]) -> dict:
    """One entry per attention name: its kind, layer, row/column labels and per-head weights.

    ``attention``: ``{name: (head_ids, (H, T_out, K))}`` (:func:`select`); ``rows``: the
    ``T_out`` step labels; ``src``: the source pieces (the columns of cross-attention).
    """
    self_cols = [BOS_LABEL, *rows[: len(rows) - 1]]  # the decoder input at each step
    views = {}
    for name, (head_ids, weights) in attention.items():  # (H, T_out, K)
        kind = "self" if name.endswith("self") else "cross"
        layer = budget.LAYER.match(name)
        views[name] = {
            "kind": kind,
            "layer": int(layer.group(1)) if layer else None,
            "rows": rows,
            "cols": self_cols if kind == "self" else src,
            "head_ids": head_ids,
            "heads": _rounded(weights),
        }
    return views


@torch.no_grad()
def step_probabilities(model, tokenizer, src_ids: list[int], tgt_ids: list[int], finished: bool):
    """Per output step: the chosen token's probability and the most likely alternatives.

    One teacher-forced pass over ``<s> y_1 .. y_T`` (the decoder's own output), so each row is
    ``p(. | y_<t, x)`` as the search saw it; the EOS step is included when ``finished``.
    """
    device = devices.of(model)
    src = torch.tensor([src_ids or [tokenizer.unk_id]], device=device)  # (1, S)
    src_mask = torch.ones_like(src, dtype=torch.bool)  # (1, S)
    tgt_in = torch.tensor([[tokenizer.bos_id, *tgt_ids]], device=device)  # (1, T + 1)
    logits = model(src, src_mask, tgt_in).logits[0].float()  # (T + 1, V)
    probs = torch.softmax(logits, dim=-1)  # (T + 1, V)
    chosen = [*tgt_ids, tokenizer.eos_id] if finished else list(tgt_ids)
    top = probs.topk(min(ALTERNATIVES + 1, probs.size(-1)), dim=-1)
    steps = []
    for t, token in enumerate(chosen):
        others = [
            [_piece(tokenizer, i), round(float(p), DIGITS)]
            for p, i in zip(top.values[t].tolist(), top.indices[t].tolist(), strict=True)
            if i != token
        ][:ALTERNATIVES]
        steps.append(
            {
                "token": _piece(tokenizer, token),
                "prob": round(float(probs[t, token]), DIGITS),
                "alternatives": others,
            }
        )
    return steps


def _piece(tokenizer, token: int) -> str:
    return EOS_LABEL if token == tokenizer.eos_id else tokenizer.tgt.id_to_piece(int(token))


def hypothesis_view(model, tokenizer, result, k: int, src_ids: list[int], attention) -> dict:
    """The ``k``-th hypothesis of a translation: its pieces, ``attention`` (:func:`select`) and
    step probabilities."""
    pieces, finished = result.tgt_pieces[k], result.finished[k]
    rows = [*pieces, EOS_LABEL] if finished else list(pieces)
    tgt_ids = [tokenizer.tgt.piece_to_id(p) for p in pieces]
    return {
        "text": result.outputs[k],
        "score": round(result.scores[k], 4),
        "finished": finished,
        "tgt_pieces": pieces,
        "rows": rows,
        "attention": attention_views(attention, rows, result.src_pieces),
        "steps": step_probabilities(model, tokenizer, src_ids, tgt_ids, finished),
    }


def translate_payload(
    cfg, tokenizer, model, request: Request, limits: ExplorerLimits = LIMITS, shape=None
) -> dict:
    """Translate ``request.text`` with beam ``request.beam`` and build the JSON payload.

    The top level describes the best hypothesis; ``hypotheses`` holds the beam's n-best, best
    first (as many as ``limits`` allow, :func:`budget.fit_answer`), each with its own rows,
    attention and steps, so the page can step through any of them. ``shape``: the model's
    :class:`budget.AttentionShape` (None: probed now). Raises :class:`RequestError` for a
    request beyond ``limits``.
    """
    from attnkit.apps.translation.decode.translate import translate_texts

    shape = shape or budget.probe(model, tokenizer, cfg.decode)
    src_ids = tokenizer.encode_src([request.text])[0]
    steps = budget.search_steps(cfg.decode, len(src_ids))
    budget.check_search(shape, limits, max(len(src_ids), 1), steps, request.beam)
    n_best = request.n_best or min(request.beam, limits.max_n_best)
    decode = replace(cfg.decode, n_best=n_best)
    (result,) = translate_texts(
        model, tokenizer, [request.text], decode, beam_size=request.beam, need_weights=True
    )
    recorded = result.attention or [{} for _ in result.outputs]
    chosen = [select(attention, request.layers, request.heads) for attention in recorded]
    sizes = [sum(w.numel() for _, w in views.values()) for views in chosen]
    count = budget.fit_answer(sizes, limits, request.n_best)
    hypotheses = [
        hypothesis_view(model, tokenizer, result, k, src_ids, chosen[k]) for k in range(count)
    ]
    best = hypotheses[0]
    return {
        "source": request.text,
        "output": best["text"],
        "score": best["score"],
        "finished": best["finished"],
        "beam": request.beam,
        "arch": cfg.model.arch,
        "src_pieces": result.src_pieces,
        "tgt_pieces": best["tgt_pieces"],
        "rows": best["rows"],
        "attention": best["attention"],
        "steps": best["steps"],
        "hypotheses": hypotheses,
    }


def examples_payload() -> dict:
    """The built-in worked examples (:func:`attnkit.interpret.explain.builtin_examples`)."""
    return {"examples": [walk.to_dict() for walk in builtin_examples()]}


def info_payload(cfg, run_dir, max_chars: int, max_beam: int = MAX_BEAM) -> dict:
    """What the page needs to set itself up: demo or run mode, limits, defaults."""
    if cfg is None:
        return {"mode": "demo", "max_chars": max_chars, "max_beam": max_beam}
    return {
        "mode": "run",
        "run": str(run_dir),
        "name": cfg.name,
        "arch": cfg.model.arch,
        "attention": cfg.model.attention if cfg.model.arch == "rnn" else "multi-head",
        "beam": cfg.decode.beam_size,
        "max_beam": max_beam,
        "max_chars": max_chars,
        "languages": [cfg.data.src_lang, cfg.data.tgt_lang],
    }
