"""A trained speech run as a Python object (``attnkit.load_run``): the model of
``model.safetensors`` with its vocabulary and config, which transcribes wav files or feature
arrays and scores a split of its data.

A run directory holds ``config.yaml``, ``vocab.json``, ``model.safetensors``, ``metrics.json``,
``checkpoints/`` and, once scored, ``evaluation-SPLIT.json`` (the scores with every
prediction, which ``attnkit report`` shows)::

    run = attnkit.load_run("runs/fsdd-las")
    (t,) = run.transcribe(["digits.wav"], attention=True)   # t.text, t.attention (T_out, T')
    scores = run.evaluate("test-long")                      # WER, CER, DER, monotonicity
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from attnkit.apps import require_kind
from attnkit.apps.speech.alignment import digit_string_scores
from attnkit.apps.speech.config import SpeechConfig, load_config
from attnkit.apps.speech.data import PAD, Vocabulary, load_split, normalise
from attnkit.apps.speech.model import SpeechModel
from attnkit.apps.speech.recognise import Transcript, transcribe_features
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir

__all__ = ["SpeechRun"]


@dataclass
class SpeechRun:
    """``attnkit.load_run`` of a speech run: ``run.transcribe(wavs)`` decodes speech."""

    path: Path
    config: SpeechConfig
    model: SpeechModel
    vocab: Vocabulary
    task: str = "speech"

    @classmethod
    def load(cls, path: str | Path) -> SpeechRun:
        """The run at ``path`` (its best epoch's model); a run of another kind is refused
        (:class:`~attnkit.application.WrongRunKind`)."""
        require_kind(path, "speech")
        run = RunDir(path)
        cfg = load_config(run.existing_config())
        vocab = Vocabulary.load(run.root / "vocab.json")
        model = SpeechModel(cfg.model, len(vocab), pad_id=PAD)
        load_model(model, run.model)
        return cls(Path(path), cfg, model.eval(), vocab)

    def features(self, item: str | Path | np.ndarray) -> np.ndarray:
        """The normalised features ``(frames, F)`` of a wav file (FSDD runs: 8 kHz mono, as
        the training recordings) or of a feature array ``(frames, F)`` as given. AN4 runs were
        trained on AN4's MFCCs, so they take feature arrays (or ``.mfc`` files) only."""
        if isinstance(item, np.ndarray):
            return normalise(np.asarray(item, dtype=np.float32))
        path = Path(item)
        if path.suffix.lower() == ".mfc":
            from attnkit.apps.speech.an4 import read_mfc

            return normalise(read_mfc(path))
        if self.config.data.source != "fsdd":
            raise ValueError(f"{path}: an an4 run reads AN4's MFCC (.mfc) files, not audio")
        from attnkit.apps.speech.audio import wav_features
        from attnkit.apps.speech.digits import SAMPLE_RATE

        return normalise(wav_features(path, SAMPLE_RATE, self.config.data.n_mels))

    def transcribe(
        self, inputs: Sequence, *, beam: int | None = None, attention: bool = False
    ) -> list[Transcript]:
        """The text of each input (wav or ``.mfc`` paths, or feature arrays ``(frames, F)``),
        decoded with ``beam`` (default ``train.beam``); ``attention``: each output step's
        weights over the annotations ``(T_out, T')``."""
        features = [self.features(x) for x in inputs]
        for x, f in zip(inputs, features, strict=True):
            if len(f) < self.model.reduction:
                where = x if not isinstance(x, np.ndarray) else "a feature array"
                raise ValueError(f"{where}: too short ({len(f)} frames) to transcribe")
        return transcribe_features(
            self.model, self.vocab, features, beam=beam or self.config.train.beam,
            max_len=self.config.train.max_len, attention=attention,
            ctc_rescore=self.config.train.ctc_rescore,
        )  # fmt: skip

    def predict(self, inputs: Sequence) -> list[str]:
        """The text of each input."""
        return [t.text for t in self.transcribe(inputs)]

    def evaluate(
        self, split: str = "test", data_dir: str | Path | None = None, beam: int | None = None
    ) -> dict:
        """WER, CER (and for FSDD the digit error rate) and the attention's monotonicity on
        ``split`` decoded with ``beam`` (default ``train.beam``); the record, every prediction
        included, is also written to ``RUN/evaluation-SPLIT.json``."""
        from attnkit.metrics.speech import cer, corpus_monotonicity, digit_error_rate, wer

        data = self.config.data
        if data_dir is not None:
            data = replace(data, data_dir=Path(data_dir))
        found = load_split(data, split)
        beam = beam or self.config.train.beam
        att = self.model.speller is not None
        out = transcribe_features(
            self.model, self.vocab, found.features, beam=beam,
            max_len=self.config.train.max_len, attention=att,
            ctc_rescore=self.config.train.ctc_rescore,
        )  # fmt: skip
        hyps = [t.text for t in out]
        scores = {"wer": wer(found.texts, hyps), "cer": cer(found.texts, hyps)} if hyps else {}
        if hyps and data.source == "fsdd":
            scores["der"] = digit_error_rate(found.texts, hyps)
        if hyps and att:
            scores["monotonicity"] = corpus_monotonicity(t.attention for t in out)
        extra = digit_string_scores(self.model, self.vocab, found) if att and found.spans else {}
        fixed_texts = extra.pop("fixed_length_predictions", [None] * len(hyps))
        record = {
            "split": split, "beam": beam, "n": len(found),
            "ctc_rescore": self.config.train.ctc_rescore,
            **{k: (None if math.isnan(v) else v) for k, v in scores.items()}, **extra,
            "predictions": [
                {"name": n, "truth": r, "prediction": h, **({"fixed_length": f} if f else {})}
                for n, r, h, f in zip(found.names, found.texts, hyps, fixed_texts, strict=True)
            ],
        }  # fmt: skip
        self.evaluation_file(split).write_text(json.dumps(record, indent=1), encoding="utf-8")
        return record

    def evaluation_file(self, split: str) -> Path:
        return self.path / f"evaluation-{split}.json"
