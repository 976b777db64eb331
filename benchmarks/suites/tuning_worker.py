"""Child process of the ``tuning`` suite: time two workloads under this process's settings.

``python benchmarks/suites/tuning_worker.py REPEATS [--tiny]`` prints one JSON line
``{"attend_weights": [s, ...], "transformer_step": [s, ...]}``. The settings under test
(``OMP_WAIT_POLICY``, ``MALLOC_*_``, ``ATTNKIT_MALLOPT``) come from the environment, which is
why each variant runs as its own process.
"""

from __future__ import annotations

import json
import sys
import time

from attnkit.runtime import apply_from_env

apply_from_env()  # before torch allocates anything

import torch  # noqa: E402

from attnkit.apps.translation.config import ModelConfig  # noqa: E402
from attnkit.apps.translation.models.build import build_model  # noqa: E402
from attnkit.attention import attend, causal_mask  # noqa: E402


def workloads(tiny: bool):
    g = torch.Generator().manual_seed(0)
    b, h, length, dh = (1, 2, 64, 8) if tiny else (2, 4, 1024, 64)
    q, k, v = (torch.randn(b, h, length, dh, generator=g, requires_grad=True) for _ in range(3))
    mask = causal_mask(length)

    def attend_weights():  # the readable path: several fresh (B, H, L, L) tensors per call
        out = attend(q, k, v, mask, need_weights=True)
        (out.context.sum() + out.weights.sum()).backward()

    cfg = ModelConfig(
        arch="transformer",
        d_model=32 if tiny else 256,
        num_heads=4,
        d_ff=64 if tiny else 1024,
        encoder_layers=1 if tiny else 3,
        decoder_layers=1 if tiny else 3,
        dropout=0.1,
    )
    vocab, batch, src_len, tgt_len = (100, 4, 10, 10) if tiny else (8000, 128, 16, 17)
    model = build_model(cfg, vocab, vocab, 0).train()
    optimizer = torch.optim.Adam(model.parameters())
    src = torch.randint(4, vocab, (batch, src_len), generator=g)
    tgt = torch.randint(4, vocab, (batch, tgt_len + 1), generator=g)
    src_mask = torch.ones_like(src, dtype=torch.bool)

    def transformer_step():  # one 4,000-token-sized training step (about 128 x 16 tokens)
        logits = model(src, src_mask, tgt[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return {"attend_weights": attend_weights, "transformer_step": transformer_step}


def main() -> None:
    repeats, tiny = int(sys.argv[1]), "--tiny" in sys.argv
    fns = workloads(tiny)
    times = {}
    for name, fn in fns.items():
        fn()  # warm-up
        times[name] = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    print(json.dumps(times))


if __name__ == "__main__":
    main()
