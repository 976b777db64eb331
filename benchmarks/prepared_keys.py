"""Teacher-forced training step of a Bahdanau GRU with the attention keys projected once per
sentence (``Memory.keys``, what attnkit does) vs re-projected at every decoder step.

    OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE python benchmarks/prepared_keys.py

Prints the median time of each variant over ``--repeats`` alternating runs and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from attnkit.apps.translation.models.recurrent import RNNSeq2Seq


def step(model: RNNSeq2Seq, src, mask, tgt, prepared: bool) -> float:
    """One forward + backward; with ``prepared=False`` the memory carries no keys, so the
    attention layer projects the encoder states again at every step."""
    start = time.perf_counter()
    memory = model.encode(src, mask)
    if not prepared:
        memory.keys = None
    state, total = model.init_state(memory), 0.0
    for t in range(tgt.size(1)):
        out = model.decode_step(memory, state, tgt[:, t])
        state, total = out.state, total + out.logits.logsumexp(-1).mean()
    total.backward()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=40)
    parser.add_argument("--src-len", type=int, default=40)
    parser.add_argument("--tgt-len", type=int, default=50)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = RNNSeq2Seq(1000, 1000, embed_dim=64, hidden_dim=args.hidden, attention="bahdanau")
    src = torch.randint(4, 1000, (args.batch, args.src_len))
    mask = torch.ones_like(src, dtype=torch.bool)
    tgt = torch.randint(4, 1000, (args.batch, args.tgt_len))
    times: dict[bool, list[float]] = {True: [], False: []}
    for prepared in (True, False):  # warm-up
        step(model, src, mask, tgt, prepared)
    for _ in range(args.repeats):
        for prepared in (True, False):
            times[prepared].append(step(model, src, mask, tgt, prepared))
    once, every = statistics.median(times[True]), statistics.median(times[False])
    print(
        f"threads={torch.get_num_threads()} batch={args.batch} S={args.src_len} "
        f"T={args.tgt_len} hidden={args.hidden} repeats={args.repeats}"
    )
    print(f"keys projected once:       median {once * 1000:.0f} ms")
    print(f"keys projected every step: median {every * 1000:.0f} ms")
    print(f"ratio every/once: {every / once:.2f}")


if __name__ == "__main__":
    main()
