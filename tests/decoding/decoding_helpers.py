"""Small models, a padded source batch and a step-by-step forced decoder for the decoding tests."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnkit.apps.translation.models.recurrent import RNNSeq2Seq
from attnkit.decoding import Hypothesis
from attnkit.modules.seq2seq import Memory, Seq2SeqModel, StepOutput

V, PAD, BOS, EOS = 20, 0, 1, 2
LENGTHS = (6, 2, 4, 1)  # real source lengths; the batch is padded to 6 at the end

RNN_SPECS = [
    ("gru", "none"),
    ("gru", "bahdanau"),
    ("gru", "luong-general"),
    ("gru", "local-p"),
    ("lstm", "none"),
    ("lstm", "bahdanau"),
    ("lstm", "luong-general"),
    ("lstm", "local-p"),
]
try:  # written in parallel; tested here as soon as it exists
    from attnkit.apps.translation.models.transformer import TransformerSeq2Seq
except ImportError:  # pragma: no cover
    TransformerSeq2Seq = None
MODEL_IDS = [f"{cell}-{att}" for cell, att in RNN_SPECS]
MODEL_IDS += ["transformer"] if TransformerSeq2Seq is not None else []


def source_batch(seed: int = 1) -> tuple[Tensor, Tensor]:
    """``src (4, 6)`` random ids in ``3 .. V-1`` padded with PAD, and its mask."""
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(3, V, (len(LENGTHS), max(LENGTHS)), generator=gen)  # (B, S)
    mask = torch.arange(max(LENGTHS))[None, :] < torch.tensor(LENGTHS)[:, None]  # (B, S)
    return src.masked_fill(~mask, PAD), mask


def make_model(model_id: str, seed: int = 0, eos_bias: float = 0.0) -> Seq2SeqModel:
    """A small randomly initialised float64 model in eval mode (float64, so that comparisons of
    differently batched runs test the search, not float32 rounding amplified over ~20
    recurrent steps of a random RNN); ``eos_bias`` is added to the EOS
    logit. The RNNs get N(0, 1) weights: with PyTorch's small default initialisation their
    outputs hardly depend on the input and greedy repeats one token (or EOS) everywhere;
    the Transformer keeps its own initialisation and an EOS bias of 0.5."""
    torch.manual_seed(seed)
    if model_id == "transformer":
        model = TransformerSeq2Seq(
            V, V, d_model=16, num_heads=2, d_ff=32, encoder_layers=1, decoder_layers=2, dropout=0.0
        )
        eos_bias += 0.5
    else:
        cell, attention = model_id.split("-", 1)
        model = RNNSeq2Seq(
            V,
            V,
            embed_dim=8,
            hidden_dim=16,
            attention=attention,
            cell=cell,
            dropout=0.0,
            local_window=2,
        )
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 1.0)
        eos_bias += 1.0
    with torch.no_grad():
        model.output.bias[EOS] += eos_bias
    return model.double().eval()


@torch.no_grad()
def force_decode(
    model: Seq2SeqModel, src: Tensor, src_mask: Tensor, i: int, hyp: Hypothesis
) -> tuple[float, dict[str, Tensor]]:
    """Sentence ``i`` alone and unpadded, fed ``hyp``'s tokens (+ EOS when finished) one
    step at a time: the summed log-probability and attention ``{name: (H, T, K)}``."""
    s = src[i, src_mask[i]].unsqueeze(0)  # (1, S_i)
    memory = model.encode(s, torch.ones_like(s, dtype=torch.bool))
    state, prev = model.init_state(memory), BOS
    targets = hyp.tokens + ([EOS] if hyp.finished else [])
    score, steps = 0.0, []
    for y in targets:
        out = model.decode_step(memory, state, torch.tensor([prev]), need_weights=True)
        score += float(out.logits.double().log_softmax(-1)[0, y])
        steps.append(out.attention)
        state, prev = out.state, y
    attention = {}
    for name in steps[0] if steps else []:
        rows = [step[name][0] for step in steps]  # each (H, K_t)
        width = max(r.size(-1) for r in rows)
        attention[name] = torch.stack([F.pad(r, (0, width - r.size(-1))) for r in rows], 1)
    return score, attention


class TableModel(Seq2SeqModel):
    """Log-probabilities looked up from a fixed table by (source key, decoded prefix).

    The state is ``code (B,)``, an injective number for the inputs fed so far
    (``BOS, y_1, ..., y_{t-1}``, base ``V + 1``), and ``key (B,)``, the sum of the source ids
    modulo ``table.size(0)``. The "cross" attention is a deterministic function of both, so
    attention tracking can be checked exactly too.
    """

    def __init__(self, table: Tensor) -> None:
        super().__init__()
        self.register_buffer("table", table.log_softmax(-1))  # (keys, codes, V)
        self.vocab = table.size(-1)

    def code(self, inputs: list[int]) -> int:
        """The table row used after feeding ``inputs`` (BOS first)."""
        c = 0
        for tok in inputs:
            c = c * (self.vocab + 1) + tok + 1
        return c

    def encode(self, src: Tensor, src_mask: Tensor) -> Memory:
        states = torch.stack([src.float(), torch.cos(src.float())], -1)  # (B, S, 2)
        return Memory(states * src_mask.unsqueeze(-1), src_mask)

    def init_state(self, memory: Memory) -> dict[str, Tensor]:
        key = memory.states[..., 0].sum(1).long() % self.table.size(0)  # (B,)
        return {"key": key, "code": torch.zeros_like(key)}

    def decode_step(self, memory, state, prev, need_weights=False) -> StepOutput:
        code = state["code"] * (self.vocab + 1) + prev + 1  # (B,)
        logits = self.table[state["key"], code % self.table.size(1)]  # (B, V)
        attention = {}
        if need_weights:
            scores = memory.states[..., 1] * ((code % 7) - 3).unsqueeze(1).float()  # (B, S)
            weights = scores.masked_fill(~memory.mask, float("-inf")).softmax(-1)
            attention = {"cross": weights.unsqueeze(1)}  # (B, 1, S)
        return StepOutput(logits, {"key": state["key"], "code": code}, attention)


def random_table_model(vocab: int = 5, depth: int = 4, keys: int = 3, seed: int = 0):
    """A :class:`TableModel` with random (distinct, untied) log-probabilities."""
    gen = torch.Generator().manual_seed(seed)
    size = (keys, (vocab + 1) ** depth, vocab)
    return TableModel(2.0 * torch.randn(size, generator=gen, dtype=torch.float64))


def counting(model: nn.Module) -> list[int]:
    """Count ``decode_step`` calls on ``model`` (patched on the instance)."""
    calls, step = [0], model.decode_step

    def wrapped(*args, **kwargs):
        calls[0] += 1
        return step(*args, **kwargs)

    model.decode_step = wrapped
    return calls
