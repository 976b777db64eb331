# %% [markdown]
# # Lesson 4: The Transformer
#
# In lesson 2 attention was an add-on: a recurrent encoder and decoder did the work, and
# attention let the decoder look back at the source. Vaswani et al. (2017) removed the
# recurrence: "Attention Is All You Need". A Transformer reads and writes with attention
# alone, in three different roles. In this lesson you train a small one on the same generated
# English → German corpus and look at all three kinds of attention it learned.
#
# **What you will learn**
#
# 1. The Transformer's parts (Vaswani et al. 2017, §3): scaled dot-product attention (eq. 1),
#    multi-head attention (§3.2.2), the three uses of attention (§3.2.3), positional encodings
#    (§3.5).
# 2. How to configure and train a small Transformer with attnkit.
# 3. How to read **encoder self-attention**, **decoder (masked) self-attention** and
#    **cross-attention**, with heatmaps and interactive views, and how to check the causal
#    mask.
# 4. How to open the attention explorer, `attnkit serve RUN_DIR`, and talk to it from Python.
#
# Training takes about a minute on two CPU cores; the model is small and trained briefly, so
# expect rough translations.

# %%
import json
import threading
import time
import urllib.request
from importlib.resources import files
from pathlib import Path

import numpy as np
import torch
import yaml
from IPython.display import Image, display

import attnkit
from attnkit.apps.translation.decode.evaluate import evaluate_run
from attnkit.apps.translation.decode.records import plot_translation
from attnkit.apps.translation.explorer import make_server
from attnkit.interpret.heatmap import plot_heads
from attnkit.viz import cross_view, head_view, model_view

torch.manual_seed(0)
RUN = Path("runs/transformer")  # relative to the working directory

# %% [markdown]
# ## 1. The architecture
#
# **Scaled dot-product attention** (§3.2.1, eq. 1): queries $Q$, keys $K$ and values $V$,
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V.$$
#
# **Multi-head attention** (§3.2.2): $h$ heads, each with its own projections of width
# $d_k = d_{\text{model}} / h$, run side by side and are concatenated:
# $\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)W^O$,
# $\mathrm{head}_i = \mathrm{Attention}(QW_i^Q, KW_i^K, VW_i^V)$. Each head can learn a
# different relation.
#
# **Three uses of attention** (§3.2.3):
#
# | where | queries | keys and values | mask |
# |---|---|---|---|
# | encoder self-attention | source | source | padding only: all see all |
# | decoder self-attention | target so far | target so far | **causal**: $i$ sees $\le i$ |
# | cross-attention | target | encoder output | padding only |
#
# Cross-attention is lesson 2's Bahdanau attention with a different score (scaled dot
# product instead of a small network) and several heads.
#
# **Positions** (§3.5): attention itself ignores word order (shuffle the keys and the
# weights shuffle with them), so sinusoids of the position are added to the embeddings:
# $PE_{(pos, 2i)} = \sin(pos / 10000^{2i/d_{\text{model}}})$ and the cosine for $2i + 1$.
#
# ## 2. A small Transformer
#
# attnkit ships the config of its bottleneck experiment inside the package. We read it, then
# shrink it: half the width, half the data, a short warm-up.

# %%
packaged = files("attnkit.apps.translation") / "configs" / "bottleneck-transformer.yaml"
config = yaml.safe_load(packaged.read_text())
print(yaml.safe_dump({k: config[k] for k in ("model", "train")}, sort_keys=False))

config["name"] = "lesson-transformer"
config["data"]["generated_sizes"] = [4000, 200, 400]  # train / valid / test pairs
config["model"].update(d_model=64, d_ff=256)  # 4 heads of width 16, 2 + 2 layers
config["train"].update(
    epochs=5,
    warmup_steps=60,  # the Noam schedule's warm-up (eq. 3), in updates (about 65 an epoch)
    learning_rate=0.003,  # the peak rate, reached at the end of the warm-up
    valid_bleu=False,  # pick the best epoch by validation loss: no decoding each epoch
    tensorboard=False,
    # one core: a model this small gains little from a second one, and loses a lot when that
    # core is busy with other work (threads wait for each other at every operation)
    threads=1,
)
with open("transformer.yaml", "w", encoding="utf-8") as file:
    yaml.safe_dump(config, file, sort_keys=False)

# %% [markdown]
# The learning-rate schedule is the paper's (§5.3, eq. 3): it rises linearly during the
# warm-up and then decays as $1/\sqrt{\text{step}}$. The packaged config warms up for 400
# updates; five epochs of about 65 updates would end before the warm-up did, hence 60.

# %%
start = time.perf_counter()
print(attnkit.train("transformer.yaml", RUN))
print(f"trained in {time.perf_counter() - start:.0f} s")
run = attnkit.load_run(RUN)
n_parameters = sum(p.numel() for p in run.model.parameters())
print(f"{n_parameters:,} parameters")

# %% [markdown]
# How good is it? Test BLEU by source length, as in lesson 2 (greedy decoding):

# %%
evaluation = evaluate_run(RUN, "test", beam_size=1)
for row in evaluation.by_length:
    print(f"{row['bucket']:>6} words: BLEU {row['bleu']:5.1f}  ({row['n']} sentences)")
print(f"   all      : BLEU {evaluation.scores.bleu:5.1f}")
assert evaluation.scores.bleu > 20  # it has learned to translate, roughly

# %% [markdown]
# Honest reading: in our runs this Transformer is *worse* than lesson 2's Bahdanau model
# trained for a similar time, and it too loses BLEU on long sentences. Transformers usually
# need more updates to find their feet than a GRU with attention does (the warm-up is a
# symptom); in the README's `attnkit translation experiment bottleneck` (8 epochs on 8,000
# pairs, d_model 128) the Transformer reaches about 96 BLEU against Bahdanau's 99. Our concern
# here is not the score but what its attention does.
#
# ## 3. One sentence, all its attention
#
# We take lesson 2's sentence with a split perfect ("has seen" → "hat ... gesehen").
# `run.translate(..., attention=True)` returns every layer's and head's weights:

# %%
sentence = "The old dog has seen the big horse."
(t,) = run.translate([sentence], beam=5, attention=True)
print(t.text, "\n")
for name, w in t.attention[0].items():
    print(f"{name:15} {tuple(w.shape)}")

# %% [markdown]
# Shapes are (heads, queries, keys). `layer{l}.self` is the decoder's self-attention (output
# over output), `layer{l}.cross` the cross-attention (output over source), `encoder.layer{l}`
# the encoder's self-attention (source over source). `t.attention_record()` groups them into
# an `AttentionRecord` with three stacks, each a list of layers, and labels every row and column
# (the record every view takes, whichever application made it):

# %%
record = t.attention_record()
print("stacks:", record.names)
src, out = record.labels["encoder"][0], record.labels["cross"][0]
print("source pieces:", src)
print("output rows:  ", out)
for stack in ("encoder", "self", "cross"):
    for layer in record[stack]:
        assert torch.allclose(layer.sum(-1), torch.ones(layer.shape[:2]), atol=1e-4)  # softmax

# %% [markdown]
# ## 4. Encoder self-attention: every word sees every word
#
# Each source word builds its new representation from all the source words, before and after
# it. `model_view` shows every layer (rows) and head (columns) at once; click a small map to
# enlarge it. Rows are queries, columns keys.

# %%
model_view(t, stack="encoder", title="encoder self-attention")

# %% [markdown]
# Heads differ. A quick way to describe each one: its **entropy** (low = sharp, looks at one
# word; high = spread out, averages many) and the **mean offset** between a query and the keys
# it attends to (negative = looks left, positive = looks right).

# %%
positions = np.arange(len(src))
offset = positions[None, :] - positions[:, None]  # (S, S): key position - query position
print("layer head  entropy  mean offset  weight above the diagonal")
for layer, w in enumerate(record["encoder"]):
    for head, a in enumerate(w.numpy()):  # a: (S, S)
        entropy = float(-(a * np.log(a + 1e-12)).sum(-1).mean())
        mean_offset = float((a * offset).sum(-1).mean())
        future = float(np.triu(a, 1).sum() / a.sum())
        print(f"{layer:5} {head:4}  {entropy:7.2f}  {mean_offset:+11.2f}  {future:25.2f}")
encoder_future = np.mean([np.triu(w.numpy(), 1).sum() / w.sum().item() for w in record["encoder"]])
print(f"\nuniform attention would have entropy {np.log(len(src)):.2f}")
assert encoder_future > 0.1  # the encoder does look ahead: nothing masks the future

# %% [markdown]
# The encoder's weights lie on both sides of the diagonal: a word's representation mixes in
# the words *after* it. That is exactly what the decoder must not do.
#
# ## 5. Decoder self-attention: the causal mask
#
# When the decoder writes output $i$, outputs $i + 1, \dots$ do not exist yet. Training
# computes all positions at once (teacher forcing), so the decoder's self-attention is masked
# (§3.2.3): query $i$ may only attend to keys $\le i$. In the weights, everything above the
# diagonal must be **exactly zero**: $\mathrm{softmax}$ of $-\infty$.

# %%
for layer, w in enumerate(record["self"]):  # (H, T, T)
    above = torch.triu(w, diagonal=1)
    print(f"layer {layer}: largest weight above the diagonal = {above.abs().max().item()}")
    assert torch.all(above == 0)  # causal: no query sees the future

rows, cols = record.labels["self"]
last = record["self"][-1]  # (H, T, T), the top decoder layer
display(
    Image(
        filename=plot_heads(
            last, rows, cols, "decoder-self.png", title="decoder self-attention, layer 1 (the top)"
        )
    )
)

# %% [markdown]
# Rows are the outputs (the token each step wrote); columns are the decoder's *inputs*, which
# are the outputs shifted right, starting with `<s>`. The lower-triangular shape is the mask.
# Look at the row of "gesehen": which earlier German word does it look at most?

# %%
i = rows.index("▁gesehen")
for head, w in enumerate(last):  # w: (T, T)
    j = int(w[i].argmax())
    print(f"head {head}: 'gesehen' attends most to '{cols[j]}' ({w[i, j]:.2f})")
on_hat = last[:, i, cols.index("▁hat")]  # (H,): each head's weight from "gesehen" to "hat"
assert on_hat.max() > 0.5  # some head reads the auxiliary

# %% [markdown]
# Some heads put most of the weight of "gesehen" on the auxiliary "hat": to write the
# participle at the end, the decoder checks what it wrote earlier in the sentence (German's
# "hat ... gesehen" bracket), while other heads look elsewhere. Which heads do this changes
# from run to run; exercise 1 asks you to look at every layer.
#
# `head_view` draws the same layer as lines from each query (left) to its keys (right), one
# colour per head; hover over a word to keep only its lines.

# %%
head_view(t, stack="self", layer=-1, title="decoder self-attention, top layer")

# %% [markdown]
# ## 6. Cross-attention: where each output word reads the source
#
# Cross-attention plays the role of Bahdanau attention: for every output step, a distribution
# over the source pieces. With several heads and layers there are several such maps;
# `plot_translation` averages the heads of one layer (default: the top one).

# %%
display(Image(filename=plot_translation(t, "cross", "cross.png")))
cross = record["cross"][-1].mean(0)  # (T_out, S), top layer, mean of heads
for piece, row in zip(out, cross, strict=True):
    j = int(row.argmax())
    print(f"{piece:>12} <- {src[j]:<9} {float(row[j]):.2f}")

# %% [markdown]
# As in lesson 2, "gesehen" at the end of the German looks back at "seen" in the middle of the
# English, in the top layer (mean of its heads). Each head of each layer has its own map,
# though:

# %%
gesehen = out.index("▁gesehen")
assert src[int(cross[gesehen].argmax())] == "▁seen"
for layer, w in enumerate(record["cross"]):  # (H, T_out, S)
    looks = [src[int(w[head, gesehen].argmax())] for head in range(w.shape[0])]
    print(f"layer {layer}: 'gesehen' looks most at", ", ".join(f"'{p}'" for p in looks))

# %% [markdown]
# In our run the lower layer's heads mostly send "gesehen" elsewhere (often to the full stop),
# and only the top layer agrees on "seen". A Transformer need not keep its alignment in one
# place, which is why reading cross-attention as a word alignment needs care (lesson 5 scores
# it against human alignments). The interactive view lets you pick the layer and the head:

# %%
cross_view(t, title=t.text)

# %% [markdown]
# ## 7. The attention explorer
#
# For exploring a trained model interactively, attnkit has a small local web application.
# In a terminal:
#
# ```bash
# attnkit serve runs/transformer          # then open http://127.0.0.1:8000/
# ```
#
# Type a sentence and see its translation, the beam's best hypotheses, heatmaps of each layer
# and head, alignment lines, and a step-by-step replay of the decoding. `attnkit serve`
# blocks until Ctrl-C, so we do not run it here. Instead we start the same server in a
# background thread on a free port, ask it for a translation through its JSON API exactly as
# the web page does, and stop it.

# %%
server = make_server(RUN, port=0)  # port 0: any free port
threading.Thread(target=server.serve_forever, daemon=True).start()
try:
    page = urllib.request.urlopen(server.url, timeout=10).read().decode()
    assert "attention explorer" in page
    body = json.dumps({"text": sentence, "beam": 5}).encode()
    request = urllib.request.Request(
        server.url + "api/translate", data=body, headers={"Content-Type": "application/json"}
    )
    answer = json.load(urllib.request.urlopen(request, timeout=60))
finally:
    server.shutdown()
    server.server_close()
print(f"served at {server.url}; it answered: {answer['output']}")
print("attention it sends to the page:", list(answer["attention"]))
print("\nstep  token        probability  next best")
for k, step in enumerate(answer["steps"]):
    alternative = step["alternatives"][0] if step["alternatives"] else ("", 0.0)
    print(
        f"{k:4}  {step['token']:12} {step['prob']:11.3f}  {alternative[0]} ({alternative[1]:.3f})"
    )
assert answer["output"] == t.text  # the same model, the same beam: the same translation

# %% [markdown]
# ## Summary
#
# * A Transformer uses attention three ways: the encoder's self-attention (every source word
#   sees every source word), the decoder's masked self-attention (each output sees only the
#   outputs before it: the weights above the diagonal are exactly zero) and cross-attention
#   (each output reads the source, like Bahdanau attention, with several heads).
# * attnkit returns all of them from `run.translate(..., attention=True)`, and
#   `t.attention_record()`, the heatmaps, `model_view`, `head_view` and `cross_view` show them.
# * Individual heads specialise (sharp or spread, looking left or right); the averaged top
#   layer of cross-attention often looks like an alignment, single heads often do not.
# * Small and briefly trained, this Transformer translates worse than lesson 2's Bahdanau
#   model; with more data and updates it catches up (README, "The bottleneck, reproduced").
#
# ## Exercises
#
# 1. **Find the agreement heads.** For every decoder layer and head, print where "gesehen"
#    attends in self-attention, then do the same for a longer sentence with two perfects
#    ("The dog has seen the cat and the horse has found the ball."). Do the same heads link
#    each participle to its own "hat"? *Hint:* `record["self"][layer][head]` is `(T, T)`;
#    rows and columns are `record.labels["self"]`.
# 2. **Break the mask.** `attnkit.attention.causal_mask` builds the mask the decoder uses.
#    Build a 5 × 5 causal mask and random queries and keys, and check with
#    `attnkit.attention.attend` that the weights above the diagonal are zero, and that without
#    the mask they are not. *Hint:* masks are boolean, `True` = may attend.
# 3. **Positions matter.** Retrain with `model.positions: none` in `transformer.yaml` (use a
#    new run directory) and translate the sentence again. What happens to word order, and to
#    the encoder's attention? *Hint:* without positions, self-attention is
#    permutation-equivariant (lesson 3).
# 4. **Heads or layers?** Retrain with `num_heads: 1` and with `num_heads: 8` (keeping
#    `d_model: 64`) and compare test BLEU and the sharpness (entropy) of the cross-attention.
#    *Hint:* keep everything else fixed; one epoch takes about 10 s.
# 5. **Use the explorer.** Run `attnkit serve runs/transformer` in a terminal (from the
#    lesson's working directory, or retrain into a directory you keep), type a long sentence
#    with "because", and step through the decoding. Where is the model least sure, and what
#    was its second choice there?
