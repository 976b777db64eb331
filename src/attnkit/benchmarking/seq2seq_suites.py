"""Suites ``train`` and ``decode``: attnkit's translation models against JoeyNMT 2.3.0.

Both toolkits get the same Multi30k de->en pairs cut by the same joint BPE model (attnkit's
tokenizer; JoeyNMT reads the pieces joined by spaces at level "word" and the same vocabulary
file), the same model sizes and the same 4,000-token batches. Per round each toolkit trains
one epoch over the same ``--pairs``-sentence subset (JoeyNMT has no step limit, so the subset
fixes the work), attnkit in this process with a fresh model, JoeyNMT in its own virtual
environment; the rounds alternate. Throughput is target tokens (end-of-sentence included,
padding not) per second of the training loop, data loading and start-up excluded on both
sides (JoeyNMT's epoch line ``num. of tokens: N, S[sec]``).

Decoding translates the first ``--sentences`` of test2016 with greedy search and beam 5 with
a model trained for one epoch on the subset: briefly trained models stop at arbitrary
lengths, so both toolkits are forced to decode exactly ``MAX_OUTPUT`` steps per sentence
(see :func:`decode_attnkit`; JoeyNMT 2.3.0 ignores its own ``min_output_length`` setting,
so it runs under :mod:`~attnkit.benchmarking.joey_forced_length`, which passes it on). The
mean output length of each is reported beside the sentences/s, and a note says when the two
differ by more than 5%.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from attnkit.benchmarking.joey import JoeyRunner, find_joey
from attnkit.benchmarking.report import Comparison, Report, Result

MODELS = ("rnn", "transformer")
BATCH_TOKENS = 4000
MAX_OUTPUT = 30
CONFIGS = {"rnn": "multi30k-bahdanau.yaml", "transformer": "multi30k-transformer-cpu.yaml"}


@dataclass
class BenchData:
    tokenizer: object
    train: list
    test_sources: list[str]
    joey_dir: Path
    vocab_file: Path


def _config(model: str, tiny: bool):
    """attnkit's shipped config with the sizes JoeyNMT's peer configs are set to."""
    from attnkit.apps.translation.config import (
        DecodeConfig,
        ExperimentConfig,
        ModelConfig,
        TrainConfig,
    )

    if model == "rnn":  # emb 256, biGRU 256 per direction, GRU decoder 512, Bahdanau
        m = ModelConfig(arch="rnn", cell="gru", attention="bahdanau", embed_dim=256,
                        hidden_dim=512, dropout=0.2)  # fmt: skip
        train = TrainConfig(optimiser="adam", learning_rate=0.001, label_smoothing=0.0)
    else:  # 3+3 layers, d 256, 4 heads, ff 1024
        m = ModelConfig(arch="transformer", d_model=256, num_heads=4, d_ff=1024,
                        encoder_layers=3, decoder_layers=3, dropout=0.1)  # fmt: skip
        train = TrainConfig(optimiser="adam", learning_rate=0.0005, label_smoothing=0.1)
    if tiny:
        m = replace(m, embed_dim=32, hidden_dim=32, d_model=32, num_heads=2, d_ff=64,
                    encoder_layers=1, decoder_layers=1)  # fmt: skip
    train = replace(train, max_tokens=BATCH_TOKENS, clip_norm=0.0, threads=torch.get_num_threads())
    decode = DecodeConfig(max_len_ratio=0.0, max_len_offset=MAX_OUTPUT, length_penalty=1.0)
    return ExperimentConfig(name=f"bench-{model}", model=m, train=train, decode=decode)


def prepare_data(opts, work: Path) -> BenchData:
    """Tokenizer (trained once, cached under ``work``), the training subset, JoeyNMT's files."""
    from attnkit.apps.translation.data import (
        Tokenizer,
        clean_corpus,
        encode_pairs,
        load_corpus,
        train_tokenizer,
    )

    corpus = clean_corpus(load_corpus("multi30k", opts.data_dir, langs="de-en"))
    tok_dir = work / ("tokenizer-tiny" if opts.tiny else "tokenizer")
    if (tok_dir / "spm.model").exists():
        tokenizer = Tokenizer.load(tok_dir)
    else:
        tokenizer = train_tokenizer(corpus, tok_dir, vocab_size=500 if opts.tiny else 8000)
    pairs = corpus.train[: opts.pairs]
    train = encode_pairs(tokenizer, pairs)
    tests = [p.src for p in corpus.test[: opts.sentences]]
    joey_dir = work / "joey-data"
    joey_dir.mkdir(parents=True, exist_ok=True)
    vocab = work / "vocab.txt"
    vocab.write_text("\n".join(tokenizer.src_pieces(list(range(tokenizer.src_vocab_size))))
                     + "\n", encoding="utf-8")  # fmt: skip
    dev = corpus.valid[:20]
    for split, rows in (("train", pairs), ("dev", dev), ("test", corpus.test[: opts.sentences])):
        for side, lang in ((0, "de"), (1, "en")):
            encoded = tokenizer.encode_src if side == 0 else tokenizer.encode_tgt
            pieces = tokenizer.src_pieces if side == 0 else tokenizer.tgt_pieces
            lines = [" ".join(pieces(ids)) for ids in encoded([r[side] for r in rows])]
            (joey_dir / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return BenchData(tokenizer, train, tests, joey_dir, vocab)


def train_attnkit(cfg, data: BenchData, seed: int):
    """One epoch over the subset with a fresh model: (seconds, target tokens, steps, model).

    The step is attnkit's training step (``attnkit.engine.trainer``): length-bucketed token
    batches, teacher forcing, smoothed cross-entropy per token, backward, Adam; checkpoints
    and validation are left out here as they are on JoeyNMT's side."""
    from attnkit.apps.translation.data import TokenBatchSampler, collate
    from attnkit.apps.translation.models.build import build_model
    from attnkit.engine.losses import translation_loss

    torch.manual_seed(seed)
    tok = data.tokenizer
    model = build_model(cfg.model, tok.src_vocab_size, tok.tgt_vocab_size, tok.pad_id).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.train.learning_rate)
    batches = list(TokenBatchSampler(data.train, cfg.train.max_tokens, seed=seed))
    tokens = 0
    start = time.perf_counter()
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.train.bf16)
    for index in batches:
        batch = collate([data.train[i] for i in index], pad_id=tok.pad_id)
        with autocast:  # as the trainer does with `train.bf16: true`
            out = model(batch.src, batch.src_mask, batch.tgt_in)
        loss_sum, n = translation_loss(
            out.logits.float(),
            batch.tgt_out,
            pad_id=tok.pad_id,
            label_smoothing=cfg.train.label_smoothing,
        )
        optimizer.zero_grad(set_to_none=True)
        (loss_sum / n).backward()
        optimizer.step()
        tokens += int(n)
    seconds = time.perf_counter() - start
    n_params = sum(p.numel() for p in model.parameters())
    return seconds, tokens, len(batches), model.eval(), n_params


def decode_attnkit(cfg, data: BenchData, model, beam: int):
    """(seconds, mean output tokens) translating the test subset, every output forced to
    ``MAX_OUTPUT`` steps: no token ends a sentence (``eos_id=-1``), as JoeyNMT's
    ``min_output_length = max_output_length`` forbids its end token, so both do the same
    number of decoder steps whatever the briefly trained models would emit."""
    from attnkit.apps.translation.data import collate, encode_sources, sorted_batches
    from attnkit.decoding import beam_search, greedy_decode

    tok = data.tokenizer
    examples = encode_sources(tok, data.test_sources)
    kwargs = dict(bos_id=tok.bos_id, eos_id=-1, max_len=MAX_OUTPUT, max_len_ratio=0.0,
                  max_len_offset=MAX_OUTPUT)  # fmt: skip
    lengths = []
    start = time.perf_counter()
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.decode.bf16)
    with torch.no_grad(), autocast:  # as translate_texts does with `decode.bf16: true`
        for index in sorted_batches(examples, cfg.decode.max_tokens):
            batch = collate([examples[i] for i in index], pad_id=tok.pad_id)
            if beam == 1:
                hyps = greedy_decode(model, batch.src, batch.src_mask, **kwargs)
            else:
                hyps = [
                    n[0]
                    for n in beam_search(model, batch.src, batch.src_mask, beam_size=beam,
                                         length_penalty=cfg.decode.length_penalty, **kwargs)
                ]  # fmt: skip
            lengths += [len(h.tokens) for h in hyps]
    seconds = time.perf_counter() - start
    return seconds, sum(lengths) / len(lengths)


def _work(opts) -> Path:
    work = Path(opts.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    return work


def run_train(opts, report: Report) -> None:
    _run(opts, report, decode=False)


def run_decode(opts, report: Report) -> None:
    _run(opts, report, decode=True)


def _run(opts, report: Report, decode: bool) -> None:
    if opts.tiny:
        opts.pairs, opts.sentences = min(opts.pairs, 300), min(opts.sentences, 20)
    work = _work(opts)
    data = prepare_data(opts, work)
    joey = find_joey(opts.joey_venv)
    if joey is None:
        report.notes.append(
            "JoeyNMT skipped: no virtual environment given (--joey-venv or ATTNKIT_JOEY_VENV; "
            "install it with ../shared/peers/joeynmt/install.sh DIR)"
        )
    else:
        report.extra_versions["joeynmt"] = joey.version
    report.options.update(batch_tokens=BATCH_TOKENS, max_output=MAX_OUTPUT,
                          train_pairs=len(data.train))  # fmt: skip
    for name in MODELS:
        cfg = _config(name, opts.tiny)
        runner = JoeyRunner(joey, work / f"joey-{name}", data, name, opts.tiny) if joey else None
        rounds = {"attnkit": [], "JoeyNMT": []}
        bf16 = not decode and "bf16" in opts.dtypes  # attnkit's bf16 autocast, also timed
        if bf16:
            rounds["attnkit bf16"] = []
        model = None
        for r in range(1 if decode else opts.repeats):  # decoding needs one trained model
            seconds, tokens, steps, model, n_params = train_attnkit(cfg, data, seed=r + 1)
            rounds["attnkit"].append((seconds, tokens, steps, n_params))
            if bf16:
                cfg16 = replace(cfg, train=replace(cfg.train, bf16=True))
                seconds, tokens, steps, _, n_params = train_attnkit(cfg16, data, seed=r + 1)
                rounds["attnkit bf16"].append((seconds, tokens, steps, n_params))
            if runner is not None:
                rounds["JoeyNMT"].append(runner.train())
        if not decode:
            _record_train(report, name, rounds)
            continue
        cfg16 = replace(cfg, decode=replace(cfg.decode, bf16=True))
        for beam in (1, 5):
            times = {"attnkit": [], "JoeyNMT": []}
            if "bf16" in opts.dtypes:  # attnkit's bf16 autocast, also timed
                times["attnkit bf16"] = []
            # warm-up, as JoeyNMT's `test` warms up on the dev file before the timed test file
            decode_attnkit(cfg, replace(data, test_sources=data.test_sources[:20]), model, beam)
            for _ in range(opts.repeats):
                times["attnkit"].append(decode_attnkit(cfg, data, model, beam))
                if "attnkit bf16" in times:
                    times["attnkit bf16"].append(decode_attnkit(cfg16, data, model, beam))
                if runner is not None:
                    times["JoeyNMT"].append(runner.decode(beam, MAX_OUTPUT))
            _record_decode(report, name, beam, len(data.test_sources), times)


def _record_train(report: Report, name: str, rounds: dict) -> None:
    case = f"train {name}"
    rates = {}
    for impl, rows in rounds.items():
        if not rows:
            continue
        rates[impl] = [tokens / seconds for seconds, tokens, *_ in rows]
        report.results.append(
            Result(
                case,
                impl,
                {"model": name},
                [row[0] for row in rows],
                {
                    "tokens/s": statistics.median(rates[impl]),
                    "tokens": rows[0][1],
                    "steps": rows[0][2],
                    "parameters": rows[0][3],
                },
            )  # fmt: skip
        )
    for ours in ("attnkit", "attnkit bf16"):  # JoeyNMT trains in fp32 (its fp16 is CUDA-only)
        if ours not in rates or "JoeyNMT" not in rates:
            continue
        ratios = [a / b for a, b in zip(rates[ours], rates["JoeyNMT"], strict=True)]
        met = statistics.median(ratios) >= 2.0
        report.comparisons.append(Comparison(case, ours, "JoeyNMT", ratios,
                                             kind="tokens/s attnkit/JoeyNMT (higher is better)",
                                             target=">= 2.0", met=met))  # fmt: skip


def _record_decode(report: Report, name: str, beam: int, n: int, times: dict) -> None:
    case = f"decode {name} {'greedy' if beam == 1 else f'beam {beam}'}"
    rates = {}
    for impl, rows in times.items():
        if not rows:
            continue
        rates[impl] = [n / seconds for seconds, _ in rows]
        report.results.append(
            Result(
                case,
                impl,
                {"model": name, "beam": beam, "sentences": n},
                [s for s, _ in rows],
                {
                    "sentences/s": statistics.median(rates[impl]),
                    "sentences": n,
                    "out_tokens": rows[0][1],
                    "out_tokens/s": statistics.median(n * length / s for s, length in rows),
                },
            )  # fmt: skip
        )
    if "JoeyNMT" not in rates:
        return
    lengths = {impl: rows[0][1] for impl, rows in times.items() if rows}
    for ours in ("attnkit", "attnkit bf16"):  # JoeyNMT decodes in fp32
        if ours not in rates:
            continue
        if abs(lengths[ours] - lengths["JoeyNMT"]) > 0.05 * lengths[ours]:
            report.notes.append(
                f"{case}: unequal work, mean output {lengths[ours]:.1f} tokens ({ours}) "
                f"vs {lengths['JoeyNMT']:.1f} (JoeyNMT); the ratio is not comparable"
            )
        ratios = [a / b for a, b in zip(rates[ours], rates["JoeyNMT"], strict=True)]
        target = None if beam == 1 else (5.0 if name == "transformer" else 2.0)
        met = None if target is None else statistics.median(ratios) >= target
        report.comparisons.append(Comparison(case, ours, "JoeyNMT", ratios,
                                             kind="sentences/s attnkit/JoeyNMT (higher is better)",
                                             target=None if target is None else f">= {target}",
                                             met=met))  # fmt: skip
