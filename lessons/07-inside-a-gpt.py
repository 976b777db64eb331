# %% [markdown]
# # Lesson 7: Inside a GPT
#
# GPT-2 and GPT-3 are one block repeated: causal self-attention, then a small network at each
# position, each inside a residual connection (Radford et al. 2018; 2019). This lesson trains
# a small one on Shakespeare's characters, makes it write, and then looks at what its heads
# do. Two things are known about heads in models like it:
#
# 1. **Induction heads** (Olsson et al. 2022): in a sequence `... A B ... A`, a head in the
#    second layer looks at the token *after* the earlier `A` (it "prefix-matches") and copies
#    it, so the model predicts `B`. They appear suddenly during training, a phase change.
# 2. **Attention sinks** (Xiao et al. 2023): many heads put a large share of their attention
#    on the first position, whatever token stands there.
#
# **What you will learn**: the causal mask and the KV cache in a language model; sampling
# with temperature, top-k and top-p; reading per-head scores; watching an induction head
# form. Everything runs on a CPU in about two minutes; the full recipes and the figures
# measured against nanoGPT are on the [GPT page](../gpt.md).

# %%
import json
import logging

import matplotlib.pyplot as plt
import torch

import attnkit
from attnkit.apps.gpt.data import read_corpus
from attnkit.apps.gpt.generate import Sampling, generate
from attnkit.apps.gpt.heads import head_scores
from attnkit.viz import model_view

logging.getLogger("attnkit").setLevel(logging.WARNING)
_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. A small GPT on Shakespeare
#
# The config is `configs/shakespeare-gpt-cpu.yaml` made smaller: 2 layers of 4 heads, 64 wide,
# a context of 64 characters, 600 updates. The text is read from `../shared/data` (the first
# 90% trains, the last 10% validates) and the vocabulary is its 65 characters.

# %%
CONFIG = """
name: tiny-gpt
task: language-model
data: {source: shakespeare, block_size: 64}
model: {layers: 2, heads: 4, width: 64, bias: false}
train: {epochs: 3, eval_interval: 200, eval_iters: 10, batch_size: 16, learning_rate: 0.003,
        warmup_steps: 50, seed: 0, threads: 2, precision: fp32, tensorboard: false}
"""
with open("tiny-gpt.yaml", "w", encoding="utf-8") as f:
    f.write(CONFIG)
gpt = attnkit.train("tiny-gpt.yaml", "runs/tiny-gpt")
history = json.loads(open("runs/tiny-gpt/metrics.json", encoding="utf-8").read())["history"]
print([(h["step"], round(h["valid_loss"], 3)) for h in history])
assert history[-1]["valid_loss"] < 2.6  # from 4.17 (ln 65) before training

# %% [markdown]
# ## 2. Writing, one character at a time
#
# Each step feeds the last character and the cache of every layer's keys and values, so only
# the new position is computed. Temperature divides the logits (0 takes the most likely
# character), top-k keeps the k most likely, top-p the fewest whose probability reaches p. The
# cached loop gives exactly what recomputing the whole context each step gives.

# %%
print(gpt.generate("ROMEO:", max_new=120, temperature=0.8, top_k=10, seed=1))
prompt = gpt.encode("ROMEO:")
cached = generate(gpt.model, prompt, 60, Sampling(temperature=0), use_cache=True)
recomputed = generate(gpt.model, prompt, 60, Sampling(temperature=0), use_cache=False)
assert torch.equal(cached, recomputed)
assert gpt.generate("KING", 40, seed=3) == gpt.generate("KING", 40, seed=3)  # seeded

# %% [markdown]
# ## 3. Every head at once
#
# `run.attention(text)` gives the record every attnkit view takes: one `(heads, T, T)` tensor
# per layer. The causal mask shows as the empty upper triangle. The model view draws all
# heads; click one to zoom.

# %%
text = "ROMEO:\nBut soft, what light through yonder window breaks?"
record = gpt.attention(text)
layers = record["self"]
assert all(float(w.triu(1).abs().max()) == 0.0 for w in layers)  # nothing from the future
model_view(layers, list(text))

# %% [markdown]
# **Sinks.** The share of each head's attention on position 0 (leaving out the first queries,
# where position 0 is one of few keys to choose from):

# %%
valid = read_corpus(gpt.config.data, gpt.vocab).valid
rows = valid[: 64 * 64].view(64, 64)  # 64 blocks of 64 characters
scores = head_scores(gpt.model, rows, with_copying=False)
print("share on position 0, layer x head:\n", scores.sink_share.numpy().round(3))
print("previous-token attention, layer x head:\n", scores.previous_token.numpy().round(3))

# %% [markdown]
# ## 4. An induction head forms
#
# Olsson et al.'s setting: random tokens, then the same tokens again. The first copy cannot be
# predicted (at best ln 50 = 3.91 nats a token); the second can, if one head finds the
# previous occurrence of the current token and another copies what followed it. The model is
# attention only (`mlp: false`), two layers; the history records the loss of both halves and
# the best layer-2 head's prefix-matching score at every validation
# (`configs/induction-gpt.yaml`, shortened to 1,200 updates at a constant rate after the
# warm-up: the config's cosine decay over 1,200 updates slows the rate before the head forms).

# %%
INDUCTION = """
name: induction
task: language-model
data: {source: repeated, vocab_size: 50, half: 32, block_size: 64, min_period: 8}
model: {layers: 2, heads: 4, width: 64, mlp: false, positions: rope, dropout: 0.0}
train: {epochs: 24, eval_interval: 50, batch_size: 32, learning_rate: 0.001, warmup_steps: 100,
        schedule: warmup_constant, threads: 2, precision: fp32, tensorboard: false}
"""
with open("induction.yaml", "w", encoding="utf-8") as f:
    f.write(INDUCTION)
induction = attnkit.train("induction.yaml", "runs/induction")
curve = json.loads(open("runs/induction/metrics.json", encoding="utf-8").read())["history"]
steps = [h["step"] for h in curve]
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.2))
left.plot(steps, [h["first_half_loss"] for h in curve], label="first copy")
left.plot(steps, [h["repeat_loss"] for h in curve], label="repeat")
left.set(xlabel="updates", ylabel="loss (nats)", title="the phase change")
left.legend()
right.plot(steps, [h["prefix_matching"] for h in curve])
right.set(xlabel="updates", ylabel="prefix matching", title="best layer-2 head")
plt.show()
last = curve[-1]
print({k: round(last[k], 3) for k in ("first_half_loss", "repeat_loss", "prefix_matching")})
assert last["prefix_matching"] >= 0.5
assert last["repeat_loss"] < last["first_half_loss"] - 1.0

# %% [markdown]
# ## Exercises
#
# 1. Train the induction model with `positions: learned` instead of `rope`. Does a head still
#    form in 1,200 updates? (The GPT page says what 1,500 gave.)
# 2. Set `min_period` to `null`, so every row repeats after exactly 32 tokens. Which head
#    solves the repeat now, and does it still work on rows with another period?
# 3. Generate from the Shakespeare model with `top_p=0.5` and `top_p=0.95`: what changes?
# 4. Train the Shakespeare model with `kv_heads: 1` (multi-query attention): how much smaller
#    is the KV cache, and what does it cost in validation loss?
