"""A Hugging Face GPT-2 checkpoint folder (``config.json`` and ``model.safetensors``, as
``GPT2LMHeadModel.save_pretrained`` writes them) loaded into attnkit's :class:`GPT`, which then
gives the same logits: GPT-2 is a pre-LN GPT with learned positions, biases, GELU's tanh
approximation and tied embeddings (Radford et al. 2019, §2.3).

GPT-2 stores its linear layers as ``Conv1D`` (``y = x W + b``, ``W (in, out)``), the transpose
of ``nn.Linear``'s weight, and its query, key and value projections as one ``c_attn`` of width
``3 D``: both are converted here. Reading needs only ``safetensors``, not transformers::

    from attnkit.apps.gpt.hf_gpt2 import load_gpt2
    model = load_gpt2("path/to/gpt2")            # GPT; tokens are GPT-2's token ids
"""

from __future__ import annotations

import json
from pathlib import Path

from torch import Tensor

from attnkit.apps.gpt.config import GPTModelConfig
from attnkit.apps.gpt.model import GPT
from attnkit.errors import DataError


def gpt2_config(folder: Path) -> tuple[GPTModelConfig, int, int]:
    """The model config, vocabulary size and context of ``folder/config.json``."""
    path = folder / "config.json"
    if not path.is_file():
        raise DataError(f"{path}: missing (a Hugging Face GPT-2 folder holds config.json)")
    hf = json.loads(path.read_text(encoding="utf-8"))
    if hf.get("model_type") != "gpt2":
        raise DataError(f"{path}: model_type {hf.get('model_type')!r}, not 'gpt2'")
    act = hf.get("activation_function", "gelu_new")
    if act not in ("gelu_new", "gelu_pytorch_tanh", "gelu"):
        raise DataError(f"{path}: activation_function {act!r} is not supported")
    width = hf["n_embd"]
    cfg = GPTModelConfig(
        layers=hf["n_layer"],
        heads=hf["n_head"],
        width=width,
        mlp_ratio=(hf.get("n_inner") or 4 * width) // width,
        dropout=0.0,
        positions="learned",
        activation="gelu" if act == "gelu" else "gelu_tanh",
        norm_eps=hf.get("layer_norm_epsilon", 1e-5),
    )
    return cfg, hf["vocab_size"], hf["n_positions"]


def load_gpt2(folder: str | Path) -> GPT:
    """attnkit's :class:`GPT` with the weights of the GPT-2 checkpoint in ``folder``."""
    from safetensors.torch import load_file

    folder = Path(folder)
    cfg, vocab, context = gpt2_config(folder)
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise DataError(f"{weights}: missing (save the model with safe_serialization=True)")
    hf = {k.removeprefix("transformer."): v for k, v in load_file(str(weights)).items()}
    model = GPT(cfg, vocab, context)
    model.load_state_dict(converted(hf, cfg.layers))  # strict: every tensor named
    return model.eval()


def converted(hf: dict[str, Tensor], layers: int) -> dict[str, Tensor]:
    """GPT-2's state dict (without the ``transformer.`` prefix) in attnkit's names."""
    out = {
        "tokens.weight": hf["wte.weight"],
        "head.weight": hf.get("lm_head.weight", hf["wte.weight"]),  # tied: the same tensor
        "positions.weight": hf["wpe.weight"],
        "ln_f.weight": hf["ln_f.weight"],
        "ln_f.bias": hf["ln_f.bias"],
    }
    for i in range(layers):
        h, b = f"h.{i}.", f"blocks.{i}."
        for ours, theirs in (("ln1", "ln_1"), ("ln2", "ln_2")):
            out[f"{b}{ours}.weight"] = hf[f"{h}{theirs}.weight"]
            out[f"{b}{ours}.bias"] = hf[f"{h}{theirs}.bias"]
        qkv_w = hf[f"{h}attn.c_attn.weight"].t()  # Conv1D (D, 3D) -> Linear (3D, D)
        qkv_b = hf[f"{h}attn.c_attn.bias"]  # (3D,)
        for name, w, bias in zip(("q", "k", "v"), qkv_w.chunk(3), qkv_b.chunk(3), strict=True):
            out[f"{b}attn.{name}_proj.weight"], out[f"{b}attn.{name}_proj.bias"] = w, bias
        pairs = (("attn.out_proj", "attn.c_proj"), ("mlp.fc", "mlp.c_fc"))
        for ours, theirs in (*pairs, ("mlp.proj", "mlp.c_proj")):
            out[f"{b}{ours}.weight"] = hf[f"{h}{theirs}.weight"].t().contiguous()
            out[f"{b}{ours}.bias"] = hf[f"{h}{theirs}.bias"]
    return {k: v.contiguous() for k, v in out.items()}
