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
so it runs under :mod:`~benchmarks.suites.joey_forced_length`, which passes it on). The
mean output length of each is reported beside the sentences/s, and a note says when the two
differ by more than 5%.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from attnkit.apps.translation.prepare import Prepared
from attnkit.apps.translation.training import TranslationTask
from benchmarks.suites.joey import JoeyRunner, find_joey
from benchmarks.suites.report import Report
from benchmarks.suites.seq2seq_records import record_decode, record_train

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
        ModelConfig,
        TrainConfig,
        TranslationConfig,
    )

    if model == "rnn":  # emb 256, biGRU 256 per direction, GRU decoder 512, Bahdanau
        m = ModelConfig(
            arch="rnn", cell="gru", attention="bahdanau", embed_dim=256, hidden_dim=512, dropout=0.2
        )
        train = TrainConfig(optimiser="adam", learning_rate=0.001, label_smoothing=0.0)
    else:  # 3+3 layers, d 256, 4 heads, ff 1024
        m = ModelConfig(
            arch="transformer",
            d_model=256,
            num_heads=4,
            d_ff=1024,
            encoder_layers=3,
            decoder_layers=3,
            dropout=0.1,
        )
        train = TrainConfig(optimiser="adam", learning_rate=0.0005, label_smoothing=0.1)
    if tiny:
        m = replace(
            m,
            embed_dim=32,
            hidden_dim=32,
            d_model=32,
            num_heads=2,
            d_ff=64,
            encoder_layers=1,
            decoder_layers=1,
        )
    train = replace(
        train,
        max_tokens=BATCH_TOKENS,
        clip_norm=0.0,
        threads=torch.get_num_threads(),
        precision="fp32",
    )  # fp32 rows; the bf16 rows set precision: bf16
    decode = DecodeConfig(
        max_len_ratio=0.0, max_len_offset=MAX_OUTPUT, length_penalty=1.0, bf16=False
    )
    return TranslationConfig(name=f"bench-{model}", model=m, train=train, decode=decode)


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
    vocab.write_text(
        "\n".join(tokenizer.src_pieces(list(range(tokenizer.src_vocab_size)))) + "\n",
        encoding="utf-8",
    )
    dev = corpus.valid[:20]
    for split, rows in (("train", pairs), ("dev", dev), ("test", corpus.test[: opts.sentences])):
        for side, lang in ((0, "de"), (1, "en")):
            encoded = tokenizer.encode_src if side == 0 else tokenizer.encode_tgt
            pieces = tokenizer.src_pieces if side == 0 else tokenizer.tgt_pieces
            lines = [" ".join(pieces(ids)) for ids in encoded([r[side] for r in rows])]
            (joey_dir / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return BenchData(tokenizer, train, tests, joey_dir, vocab)


def train_attnkit(cfg, data: BenchData, seed: int):
    """One epoch over the subset with a fresh model, trained by the engine's Trainer (the loop
    ``attnkit train`` runs: length-bucketed token batches, teacher forcing, smoothed
    cross-entropy per token, the NaN check, Adam): (seconds, target tokens, steps, model,
    parameters). The seconds are the epoch's updates: the validation set is empty and the
    checkpoint is written after the epoch's clock stops, as JoeyNMT's side skips both."""
    import tempfile

    from attnkit.engine.trainer import Trainer

    train = replace(
        cfg.train,
        epochs=1,
        seed=seed,
        schedule="constant",
        valid_bleu=False,
        tensorboard=False,
        threads=torch.get_num_threads(),
    )
    task = BenchTask(replace(cfg, train=train), data)
    threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(task, Path(tmp) / "run", progress=False)
        try:
            result = trainer.fit()
        finally:
            trainer.d.close()
            torch.set_num_threads(threads)
    tokens = sum(task.units(b) for b in task.epoch_batches(1))
    model = trainer.model.eval()
    n_params = sum(p.numel() for p in model.parameters())
    return result.history[0]["seconds"], tokens, len(result.step_losses), model, n_params


class BenchTask(TranslationTask):
    """The translation task on the benchmark's already encoded subset (no corpus to load)."""

    def __init__(self, cfg, data: BenchData) -> None:
        super().__init__(cfg)
        self.bench = data

    def prepare(self, run, *, resume: bool) -> None:
        self.data = Prepared(None, self.bench.tokenizer, self.bench.train, [])


def decode_attnkit(cfg, data: BenchData, model, beam: int):
    """(seconds, mean output tokens) translating the test subset, every output forced to
    ``MAX_OUTPUT`` steps: no token ends a sentence (``eos_id=-1``), as JoeyNMT's
    ``min_output_length = max_output_length`` forbids its end token, so both do the same
    number of decoder steps whatever the briefly trained models would emit."""
    from attnkit.apps.translation.data import collate, encode_sources, sorted_batches
    from attnkit.decoding import beam_search, greedy_decode

    tok = data.tokenizer
    examples = encode_sources(tok, data.test_sources)
    kwargs = dict(
        bos_id=tok.bos_id,
        eos_id=-1,
        max_len=MAX_OUTPUT,
        max_len_ratio=0.0,
        max_len_offset=MAX_OUTPUT,
    )
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
                    for n in beam_search(
                        model,
                        batch.src,
                        batch.src_mask,
                        beam_size=beam,
                        length_penalty=cfg.decode.length_penalty,
                        **kwargs,
                    )
                ]
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
    report.options.update(
        batch_tokens=BATCH_TOKENS, max_output=MAX_OUTPUT, train_pairs=len(data.train)
    )
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
                cfg16 = replace(cfg, train=replace(cfg.train, precision="bf16"))
                seconds, tokens, steps, _, n_params = train_attnkit(cfg16, data, seed=r + 1)
                rounds["attnkit bf16"].append((seconds, tokens, steps, n_params))
            if runner is not None:
                rounds["JoeyNMT"].append(runner.train())
        if not decode:
            record_train(report, name, rounds)
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
            record_decode(report, name, beam, len(data.test_sources), times)
