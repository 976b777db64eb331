"""``attnkit serve --hf MODEL_DIR``: the generic page (:mod:`attnkit.server.page`) on any local
Hugging Face model folder.

:func:`load` reads the folder offline (``local_files_only=True``): its ``config.json`` says
which head to load (:func:`model_kind`): a sequence classifier (``architectures`` names a
``...ForSequenceClassification``) with ``AutoModelForSequenceClassification``, an
encoder-decoder (``config.is_encoder_decoder``) with ``AutoModelForSeq2SeqLM``, a decoder-only
language model (``...ForCausalLM``, ``...LMHeadModel``) with ``AutoModelForCausalLM``, anything
else with ``AutoModel``; eager attention, so every layer's and head's weights come back.
:func:`answer` turns one text into a :class:`~attnkit.results.Shown`:

- a language model or an encoder-decoder: the greedy generation of up to ``max_new`` tokens
  (``generate(do_sample=False, num_beams=1)``, whatever the folder's generation config says)
  and the record stitched from its steps (:func:`attnkit.hf.record` of the ``generate()``
  output): ``"self"``, or ``"encoder"``, ``"self"`` and ``"cross"``;
- a classifier: the predicted label (its probabilities in the details) and the record of the
  input;
- any other model: the input's tokens and their record.

The input is cut to the positions the model has (leaving room for the generated tokens), and
the details say so. :class:`ModelApp` is the App the page serves; nothing registers it as an
application of runs.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnkit.application import App
from attnkit.results import Shown

DEFAULT_MAX_NEW = 20  # tokens generated per answer
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "source.spm",
    "tokenizer.model",
)
WEIGHT_FILES = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.pth")
AUTO_CLASS = {
    "classifier": "AutoModelForSequenceClassification",
    "seq2seq": "AutoModelForSeq2SeqLM",
    "causal": "AutoModelForCausalLM",
    "encoder": "AutoModel",
}
TOP_LABELS = 5  # a classifier's most probable labels shown in the details


@dataclass
class Loaded:
    """A model folder opened for the page: the model (eval, on its device), its tokenizer,
    its kind (a key of :data:`AUTO_CLASS`) and the folder."""

    model: Any
    tokenizer: Any
    kind: str
    folder: Path


def _transformers():
    try:
        import transformers
    except ImportError:
        raise ValueError("attnkit serve --hf needs transformers: pip install attnkit[hf]") from None
    return transformers


def check_folder(folder: Path) -> None:
    """Refuse, in one line naming ``folder``, a folder that cannot hold a model: missing, no
    ``config.json``, no tokenizer files or no weights."""
    if not folder.is_dir():
        raise ValueError(f"{folder}: no such model folder")
    if not (folder / "config.json").is_file():
        raise ValueError(
            f"{folder}: no config.json, so not a Hugging Face model folder "
            "(model.save_pretrained(folder) writes one)"
        )
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise ValueError(
            f"{folder}: no tokenizer files (tokenizer.json, tokenizer_config.json, vocab files); "
            "tokenizer.save_pretrained(folder) writes them"
        )
    if not any(any(folder.glob(pattern)) for pattern in WEIGHT_FILES):
        raise ValueError(f"{folder}: no model weights (model.safetensors or pytorch_model.bin)")


def model_kind(config: Any) -> str:
    """Which head to load for ``config`` (a key of :data:`AUTO_CLASS`)."""
    names = tuple(getattr(config, "architectures", None) or ())
    if any(name.endswith("ForSequenceClassification") for name in names):
        return "classifier"
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    if any(name.endswith(("ForCausalLM", "LMHeadModel")) for name in names):
        return "causal"
    return "encoder"


def load(folder: str | Path, device: str = "auto") -> Loaded:
    """The model folder ``folder`` read offline, in eval mode on ``device`` (float32 on the
    CPU); errors are one line naming the folder and what is missing."""
    from attnkit import devices

    folder = Path(folder)
    hf = _transformers()
    check_folder(folder)
    where = devices.pick(device)
    try:
        tokenizer = hf.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        config = hf.AutoConfig.from_pretrained(folder, local_files_only=True)
        kind = model_kind(config)
        auto = getattr(hf, AUTO_CLASS[kind])
        model = auto.from_pretrained(
            folder, config=config, local_files_only=True, attn_implementation="eager"
        )
    except (OSError, ValueError, KeyError, ImportError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"{folder}: could not load the model: {first}") from err
    model = model.eval().to(where)
    if where.type == "cpu":
        model = model.float()  # half precision is many times slower on CPUs
    return Loaded(model, tokenizer, kind, folder)


def _positions(loaded: Loaded) -> int | None:
    """How many positions the model takes (from its config and tokenizer), if it says."""
    config, limits = loaded.model.config, []
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            limits.append(value)
            break
    given = getattr(loaded.tokenizer, "model_max_length", None)
    if isinstance(given, int) and 0 < given < 1_000_000:
        limits.append(given)
    return min(limits) if limits else None


def _encode(loaded: Loaded, text: str, room: int) -> tuple[dict, dict]:
    """``text`` as the model's inputs (keys its ``forward`` takes, on its device), cut to leave
    ``room`` positions; and details saying whether it was cut."""
    limit = _positions(loaded)
    length = None if limit is None else max(limit - room, 1)
    cut = {"truncation": True, "max_length": length} if length is not None else {}
    enc = loaded.tokenizer([text], return_tensors="pt", **cut)
    whole = loaded.tokenizer([text])["input_ids"][0]
    takes = inspect.signature(loaded.model.forward).parameters
    device = next(loaded.model.parameters()).device
    inputs = {k: v.to(device) for k, v in enc.items() if k in takes}
    n = int(inputs["input_ids"].shape[-1])
    details = {"input tokens": n}
    if n < len(whole):
        details["input cut"] = f"to {n} of its {len(whole)} tokens (the model has {limit})"
    return inputs, details


def _generated(loaded: Loaded, text: str, max_new: int) -> Shown:
    """Greedy generation of up to ``max_new`` tokens, with the stitched record."""
    import torch

    from attnkit.hf import eager_attention, record

    model, tokenizer = loaded.model, loaded.tokenizer
    limit, asked = _positions(loaded), max_new
    if limit is not None:
        max_new = min(max_new, limit - 1)  # the decoder's positions hold the new tokens
    inputs, details = _encode(loaded, text, max_new if loaded.kind == "causal" else 0)
    if max_new < asked:
        details["new tokens cut"] = f"to {max_new}: the model has {limit} positions"
    config = model.generation_config
    pad = config.pad_token_id if config.pad_token_id is not None else config.eos_token_id
    with eager_attention(model), torch.no_grad():
        out = model.generate(
            **inputs,
            max_new_tokens=max_new,
            do_sample=False,
            num_beams=1,
            pad_token_id=pad,
            output_attentions=True,
            return_dict_in_generate=True,
        )
    skip = inputs["input_ids"].shape[-1] if loaded.kind == "causal" else 0
    new = out.sequences[0, skip:]
    output = tokenizer.decode(new, skip_special_tokens=True)
    (rec,) = record(model, out, tokenizer=tokenizer, inputs=inputs)
    details["output tokens"] = int(len(new)) - (loaded.kind != "causal")  # less the start
    return Shown(text, output, rec, details=details)


def _classified(loaded: Loaded, text: str) -> Shown:
    """The predicted label (the most probable ones in the details) and the input's record."""
    import torch

    from attnkit.hf import record

    inputs, details = _encode(loaded, text, 0)
    with torch.no_grad():
        logits = loaded.model(**inputs).logits[0].float()  # (labels,)
    (rec,) = record(loaded.model, inputs, tokenizer=loaded.tokenizer)
    names = getattr(loaded.model.config, "id2label", None) or {}
    if logits.numel() == 1:  # a regression head
        return Shown(text, f"{float(logits[0]):.4f}", rec, details=details)
    probs = logits.softmax(-1)
    top = probs.topk(min(TOP_LABELS, probs.numel()))
    labels = [str(names.get(int(i), int(i))) for i in top.indices]
    details["probabilities"] = {
        n: round(float(p), 4) for n, p in zip(labels, top.values, strict=True)
    }
    return Shown(text, labels[0], rec, details=details)


def _encoded(loaded: Loaded, text: str) -> Shown:
    """Any other model: the input's tokens and their record."""
    from attnkit.hf import record

    inputs, details = _encode(loaded, text, 0)
    (rec,) = record(loaded.model, inputs, tokenizer=loaded.tokenizer)
    tokens = loaded.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist())
    return Shown(text, " ".join(tokens), rec, details=details)


def answer(loaded: Loaded, text: str, max_new: int = DEFAULT_MAX_NEW) -> Shown:
    """The model's output for ``text`` and its attention record (see the module docstring);
    the details add the seconds it took."""
    start = time.perf_counter()
    if loaded.kind in ("causal", "seq2seq"):
        shown = _generated(loaded, text, max_new)
    elif loaded.kind == "classifier":
        shown = _classified(loaded, text)
    else:
        shown = _encoded(loaded, text)
    shown.details["seconds"] = round(time.perf_counter() - start, 3)
    return shown


class ModelApp(App):
    """The App the generic page serves for one model folder: a text in, :func:`answer` out.
    Its ``title`` becomes the model's class once opened."""

    name = "hf"
    group = "hf"
    title = "Hugging Face model"
    serve_input = "text"
    source = "model"  # the page says "model FOLDER", not "run FOLDER"
    runs = ()

    def __init__(self, max_new: int | None = None) -> None:
        self.max_new = DEFAULT_MAX_NEW if max_new is None else max_new
        if self.max_new < 1:
            raise ValueError(f"--max-new must be at least 1, got {self.max_new}")

    def open(self, run_dir: Path, checkpoint: str = "best", device: str = "auto") -> Loaded:
        if checkpoint != "best":
            raise ValueError(f"--checkpoint {checkpoint}: a model folder has one set of weights")
        loaded = load(run_dir, device)
        self.title = type(loaded.model).__name__
        return loaded

    def show(self, run: Loaded, inputs: list[Any]) -> list[Shown]:
        return [answer(run, str(text), self.max_new) for text in inputs]


def make_model_server(folder, host="127.0.0.1", port=0, limits=None, device="auto", max_new=None):
    """The generic page on the model folder ``folder``, bound to ``host:port`` (not yet
    serving: see :class:`~attnkit.server.running.Server`)."""
    from attnkit.server import make_page_server

    return make_page_server(ModelApp(max_new), folder, host, port, limits, "best", device)


def serve(folder: str | Path, options: Any, echo, max_new: int | None = None) -> None:
    """``attnkit serve --hf MODEL_DIR``: the page on ``folder`` until Ctrl-C (``options``: an
    :class:`~attnkit.application.ServeOptions`)."""
    ModelApp(max_new).serve(Path(folder), options, echo)
