"""Loading a trained translation run: its config, tokenizer and model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from attnkit.apps import require_kind
from attnkit.apps.translation.config import TranslationConfig, load_experiment
from attnkit.apps.translation.data import Tokenizer
from attnkit.apps.translation.decode.translate import Translation, translate_texts
from attnkit.apps.translation.models.build import build_model
from attnkit.config import ConfigError
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir, missing_config
from attnkit.modules.seq2seq import Seq2SeqModel


def load_run(
    root: str | Path, checkpoint: str = "best"
) -> tuple[TranslationConfig, Tokenizer, Seq2SeqModel]:
    """Load a trained run: its config, tokenizer and model (``best``, ``averaged`` or ``last``).

    Raises :class:`FileNotFoundError` naming what is missing.
    """
    run = RunDir(root)
    if not run.root.is_dir():
        raise FileNotFoundError(f"{run.root}: not a run directory")
    if not run.config.exists():
        raise FileNotFoundError(missing_config(run.root))
    require_kind(run.root, "translation")  # before the config: a run of another kind
    cfg = load_experiment(run.config)
    tokenizer = Tokenizer.load(run.root)
    model = build_model(
        cfg.model, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, tokenizer.pad_id
    )
    paths = {"best": run.model, "averaged": run.averaged, "last": run.last / "model.safetensors"}
    if checkpoint not in paths:
        raise ConfigError(f"unknown checkpoint {checkpoint!r}; choose one of {tuple(paths)}")
    load_model(model, paths[checkpoint])
    return cfg, tokenizer, model.eval()


@dataclass
class TranslationRun:
    """A trained translation run, ready to use from Python (``attnkit.load_run(path)``)::

    run = attnkit.load_run("runs/demo/bahdanau")
    (t,) = run.translate(["The black cat sleeps."], beam=5, attention=True)
    t.text, t.attention[0]["cross"]          # (H, T_out, S) weights of the best hypothesis
    plot_translation(t, "cross", "map.png")   # or attnkit.viz.model_view(from_translation(t))
    """

    path: Path
    config: TranslationConfig
    tokenizer: Tokenizer
    model: Seq2SeqModel
    task: str = "translation"

    def translate(
        self,
        texts: Sequence[str],
        *,
        beam: int | None = None,
        n_best: int = 1,
        attention: bool = False,
    ) -> list[Translation]:
        """Translate ``texts`` (beam as configured unless given; 1 = greedy); with
        ``attention`` each :class:`Translation` carries every layer's and head's weights."""
        decode = replace(self.config.decode, n_best=n_best)
        return translate_texts(
            self.model, self.tokenizer, list(texts), decode, beam_size=beam, need_weights=attention
        )

    predict = translate  # the name every task's run shares

    @classmethod
    def load(cls, path: str | Path, checkpoint: str = "best") -> TranslationRun:
        """The run directory ``path`` with its ``best``, ``averaged`` or ``last`` weights."""
        cfg, tokenizer, model = load_run(path, checkpoint)
        return cls(Path(path), cfg, tokenizer, model)
