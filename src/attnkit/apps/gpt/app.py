"""A GPT language model, declared once: ``attnkit train`` a config with
``task: language-model``, then ``evaluate`` (the validation loss in nats per character, as
nanoGPT reports it, or the loss of your own text file with ``--src``), ``predict`` (text
generated from ``--prompt``, or from each line of the input files) and ``serve`` (type a text,
see every layer's and head's attention)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown


class LanguageModelApp(App):
    name = "language-model"
    group = "gpt"
    title = "GPT language model"
    config_loader = "attnkit.apps.gpt.config:load_config"
    task_class = "attnkit.apps.gpt.task:GPTTask"
    run_loader = "attnkit.apps.gpt.run:open_gpt_run"
    serve_input = "text"
    evaluate_options = frozenset({"src"})
    test_split = "valid"  # nanoGPT's split: no test part
    predict_options = frozenset({"prompt", "max_new", "temperature", "top_k", "top_p", "seed"})

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """The mean loss (nats per character, and its perplexity) on ``valid`` or ``train``
        (nanoGPT's estimate: ``eval_iters`` batches of random blocks), or on every block of
        your own text file (``--src``)."""
        import torch

        from attnkit.apps.gpt.data import read_corpus
        from attnkit.apps.gpt.task import estimate_loss

        run = self.open(run_dir, device=options.device)
        if options.src is not None:
            loss, n = run.file_loss(options.src)
            split = str(options.src)
        else:
            if options.split not in ("valid", "train"):
                raise ValueError(f"no {options.split!r} split; choose valid or train")
            data = run.config.data
            if options.data_dir is not None:
                from dataclasses import replace

                data = replace(data, data_dir=Path(options.data_dir))
            corpus = read_corpus(data, run.vocab)
            ids = corpus.valid if options.split == "valid" else corpus.train
            with torch.no_grad():
                loss = estimate_loss(run.model, ids, run.config, seed=0)
            n, split = len(ids), options.split
            if data.source == "repeated":  # rows of block_size + 1 ids, block_size predicted
                n = len(ids) // (data.block_size + 1) * data.block_size
        metrics = {"loss": loss, "perplexity": math.exp(loss)}
        unit = "tokens" if run.config.data.source == "repeated" else "characters"
        return Scores(str(run_dir), split, metrics, n, unit)

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """Text generated after ``--prompt`` (or after each line of the input files, or
        stdin), ``--max-new`` characters each, sampled as the options say."""
        from attnkit.textfiles import read_text

        if options.prompt is not None:
            prompts = [options.prompt]
        elif inputs:
            prompts = [s for p in inputs for s in read_text(p).splitlines() if s]
        else:
            prompts = [line.rstrip("\n") for line in sys.stdin if line.strip()]
        run = self.open(run_dir, device=options.device)
        o, rows = options, []
        for prompt in prompts:
            text = run.generate(
                prompt,
                200 if o.max_new is None else o.max_new,
                temperature=1.0 if o.temperature is None else o.temperature,
                top_k=o.top_k,
                top_p=o.top_p,
                seed=o.seed,
            )
            rows.append([prompt + text])
        return Predictions(str(run_dir), ["text"], rows)

    def show(self, run, inputs: list[str]) -> list[Shown]:
        """Each text with its loss and every layer's and head's causal self-attention."""
        shown = []
        for text in inputs:
            details = {"loss (nats/char)": run.loss(text)} if len(text) > 1 else {}
            shown.append(Shown(text, text, run.attention(text), details=details))
        return shown

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` stretches of 64 characters of the validation text."""
        from attnkit.apps.gpt.data import read_corpus

        run = self.open(run_dir)
        valid = read_corpus(run.config.data, run.vocab).valid
        size = min(64, run.model.block_size)
        texts = [run.vocab.decode(valid[i * size : (i + 1) * size]) for i in range(n)]
        return self.show(run, [t for t in texts if len(t) > 1])


APP = LanguageModelApp()
