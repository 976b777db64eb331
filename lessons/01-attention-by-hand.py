# %% [markdown]
# # Lesson 1: Attention by hand
#
# Attention is one small computation repeated everywhere: **score → mask → normalise →
# weighted sum**. In this lesson you compute it by hand, with the numbers the lectures use,
# and then check every hand computation against attnkit.
#
# **What you will learn**
#
# 1. The four steps of scaled dot-product attention (Vaswani et al. 2017, eq. 1), on the
#    lectures' "Thinking Machines" example: 112 and 96 → 14 and 12 → 0.88 and 0.12.
# 2. Why the scores are divided by √d_k.
# 3. Self-attention without any parameters on "The cat sat on the mat", and why it behaves
#    oddly.
# 4. The roles of queries, keys and values, with hand-made projections on "The dog barked
#    loudly".
# 5. Every score function (dot, scaled dot, general, additive, location) and every normaliser
#    (softmax, sparsemax, entmax-1.5, hard, Gumbel, sampled) side by side.
# 6. How attnkit's readable NumPy reference and its PyTorch `attend` agree to the last digit.
#
# Every number the text quotes is computed in the cell below it and checked with `assert`.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from attnkit.attention import (
    AdditiveScore,
    GeneralScore,
    LocationScore,
    attend,
    reference_numpy,
)
from attnkit.interpret.explain import SENTENCE, SENTENCE_EMBEDDINGS, two_word_example

np.set_printoptions(precision=3, suppress=True)
torch.manual_seed(0)


def table(rows, header, width=9):
    """Print a small table: the first column is a label, the others numbers."""
    print("".join(f"{h:>{width}}" for h in header))
    for label, *values in rows:
        cells = [
            f"{v:>{width}.3f}" if isinstance(v, float | np.floating) else f"{v!s:>{width}}"
            for v in values
        ]
        print(f"{label!s:>{width}}" + "".join(cells))


# %% [markdown]
# ## 1. The four steps
#
# Scaled dot-product attention (Vaswani et al. 2017, §3.2.1, eq. 1) is
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V .$$
#
# Read it as four steps, the same four in every attention layer of this course:
#
# | step | what | here |
# |---|---|---|
# | 1. score | how well does each key match the query? | $q \cdot k$ |
# | 2. scale, mask | tame the scores; hide keys a query may not see | $/\sqrt{d_k}$, $-\infty$ |
# | 3. normalise | turn scores into weights that sum to 1 | softmax |
# | 4. weighted sum | mix the values with those weights | $\sum_j a_j v_j$ |
#
# ## 2. Two words: "Thinking Machines"
#
# The lectures (after Alammar's *Illustrated Transformer*) take the query of "Thinking" and two
# keys, "Thinking" and "Machines", with $d_k = 64$. The dot products are 112 and 96. We build
# vectors that give exactly those numbers: $q = (1, \dots, 1)$, $k_1 = (1.75, \dots, 1.75)$,
# $k_2 = (1.5, \dots, 1.5)$, so $q \cdot k_1 = 64 \times 1.75 = 112$ and
# $q \cdot k_2 = 64 \times 1.5 = 96$. The values are $v_1 = (2, 0, 1)$ and $v_2 = (0, 2, 1)$.

# %%
d_k = 64
q = np.ones(d_k)  # the query of "Thinking"
k1, k2 = np.full(d_k, 1.75), np.full(d_k, 1.5)  # the keys of "Thinking" and "Machines"
v1, v2 = np.array([2.0, 0.0, 1.0]), np.array([0.0, 2.0, 1.0])

scores = np.array([q @ k1, q @ k2])  # step 1: q · k
scaled = scores / np.sqrt(d_k)  # step 2: divide by sqrt(64) = 8
weights = np.exp(scaled) / np.exp(scaled).sum()  # step 3: softmax
context = weights[0] * v1 + weights[1] * v2  # step 4: weighted sum of the values

table(
    [("score", *scores), ("scaled", *scaled), ("softmax", *weights)],
    ["", "Thinking", "Machines"],
    width=10,
)
print("context =", context)
assert scores.tolist() == [112.0, 96.0] and np.sqrt(d_k) == 8
assert scaled.tolist() == [14.0, 12.0]
assert np.round(weights, 2).tolist() == [0.88, 0.12]

# %% [markdown]
# The softmax of 14 and 12 depends only on their difference: $1/(1 + e^{-2}) = 0.881$. The
# context, $0.88\,v_1 + 0.12\,v_2$, is mostly "Thinking"'s own value.
#
# attnkit has this example built in (`attnkit explain --example two-word` prints it as rich
# tables). Its numbers come from the NumPy reference; PyTorch's `attend` must agree:

# %%
walk = two_word_example()  # what `attnkit explain --example two-word` shows
steps = walk.steps
print("scores ", steps.scores, "\nscaled ", steps.scaled_scores, "\nweights", steps.weights)

out = attend(  # PyTorch, batch-first: (B=1, Tq=1, D=64) against (B=1, Tk=2, D=64)
    torch.tensor(q)[None, None],
    torch.tensor(np.stack([k1, k2]))[None],
    torch.tensor(np.stack([v1, v2]))[None],
)
print("attend ", out.weights.numpy()[0], out.context.numpy()[0])
assert np.allclose(steps.weights[0], weights) and np.allclose(steps.context[0], context)
assert np.allclose(out.weights.numpy()[0, 0], weights)
assert np.allclose(out.context.numpy()[0, 0], context)

# %% [markdown]
# ### Why divide by √d_k?
#
# Vaswani et al. (§3.2.1, footnote 4) explain: if the entries of $q$ and $k$ are independent
# with mean 0 and variance 1, then $q \cdot k$ has variance $d_k$. Large scores push the softmax
# into a region where it is almost one-hot and its gradient almost zero. Without the scaling,
# our two words get softmax(112, 96):

# %%
unscaled = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
print("softmax without scaling:", unscaled)
assert unscaled[1] < 1e-6  # "Machines" gets e^-16, about one ten-millionth

rng = np.random.default_rng(0)
for d in (4, 64, 1024):  # the variance of q · k grows like d_k
    qs, ks = rng.standard_normal((2000, d)), rng.standard_normal((2000, d))
    dots = (qs * ks).sum(1)
    scaled_var = (dots / np.sqrt(d)).var()
    print(f"d_k = {d:4d}: var(q·k) = {dots.var():7.1f}   var(q·k / sqrt(d_k)) = {scaled_var:.2f}")
    assert 0.8 * d < dots.var() < 1.2 * d and 0.8 < scaled_var < 1.2

# %% [markdown]
# Without scaling, "Machines" gets a weight of $e^{-16} \approx 10^{-7}$: the softmax has become
# a hard choice. Dividing by $\sqrt{d_k}$ brings the variance back to about 1 whatever the width.
#
# ## 3. "The cat sat on the mat": self-attention without parameters
#
# In *self*-attention the queries, keys and values all come from the same sequence. The
# simplest form uses the word vectors themselves, $Q = K = V = X$, with no learned parameters:
# the weight of word $j$ for word $i$ is $\mathrm{softmax}_j(x_i \cdot x_j)$. The lectures use
# six 3-d embeddings, `[0.1, 0.2, 0.3]` for "The" up to `[1.6, 1.7, 1.8]` for "mat"
# (`attnkit explain --example sentence`).

# %%
x = np.array(SENTENCE_EMBEDDINGS)  # (T=6, D=3)
print(SENTENCE)
print(x)
dot_steps = reference_numpy.attention(x, x, x, score="dot")  # softmax(x_i · x_j)
scaled_steps = reference_numpy.attention(x, x, x, score="scaled_dot")  # ... / sqrt(3)
print("\nscores x_i · x_j (rows: queries, columns: keys)")
table([(w, *row) for w, row in zip(SENTENCE, dot_steps.scores, strict=True)], ["", *SENTENCE])
print("\nweights, dot product")
table([(w, *row) for w, row in zip(SENTENCE, dot_steps.weights, strict=True)], ["", *SENTENCE])
print("\nweights, scaled dot product (divided by sqrt(3))")
table([(w, *row) for w, row in zip(SENTENCE, scaled_steps.weights, strict=True)], ["", *SENTENCE])

xt = torch.tensor(x)[None]  # (B=1, T=6, D=3)
for name, steps_ in (("dot", dot_steps), ("scaled_dot", scaled_steps)):
    assert np.allclose(attend(xt, xt, xt, score=name).weights[0].numpy(), steps_.weights)
assert dot_steps.scores[0, 0] == 0.1 * 0.1 + 0.2 * 0.2 + 0.3 * 0.3  # 0.14
assert (dot_steps.weights.argmax(1) == 5).all() and (scaled_steps.weights.argmax(1) == 5).all()

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
for ax, (name, steps_) in zip(
    axes, (("dot", dot_steps), ("scaled dot", scaled_steps)), strict=True
):
    ax.imshow(steps_.weights, cmap="viridis", vmin=0, vmax=dot_steps.weights.max())
    ax.set_xticks(range(6), SENTENCE)
    ax.set_yticks(range(6), SENTENCE)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    ax.set_title(f"softmax({name} scores)")
    for i in range(6):
        for j in range(6):
            ax.text(
                j, i, f"{steps_.weights[i, j]:.2f}", ha="center", va="center", fontsize=7, color="w"
            )
plt.tight_layout()
plt.show()

# %% [markdown]
# Two things to notice:
#
# * **Every word attends most to "mat"**, even "The" and "cat" (the last column is the
#   largest in every row). A dot product rewards *length* as much as *direction*: "mat" has the
#   longest vector, so it wins every comparison. Nothing here knows which word *should* matter
#   to which; this is why real models learn projections (next section).
# * **Scaling flattens the weights.** The scaled scores are the raw ones divided by $\sqrt{3}$,
#   so each row is less peaked: "mat"'s weight for itself drops from the first table to the
#   second.

# %%
entropy = lambda w: -(w * np.log(w)).sum(1)  # noqa: E731
print("row entropy, dot:   ", entropy(dot_steps.weights))
print("row entropy, scaled:", entropy(scaled_steps.weights))
mat_dot, mat_scaled = dot_steps.weights[5, 5], scaled_steps.weights[5, 5]
print(f"'mat' -> 'mat': {mat_dot:.3f} (dot) vs {mat_scaled:.3f} (scaled)")
assert (entropy(scaled_steps.weights) > entropy(dot_steps.weights)).all()
assert scaled_steps.weights[5, 5] < dot_steps.weights[5, 5]

# %% [markdown]
# ## 4. Queries, keys and values: "The dog barked loudly"
#
# A learned attention layer gives each word three different vectors by three projections,
# $Q = XW^Q$, $K = XW^K$, $V = XW^V$ (Vaswani et al. 2017, §3.2.2):
#
# * the **query** says what a word is *looking for*;
# * the **key** says what a word *offers* to be found by;
# * the **value** is what it *passes on* once found.
#
# Here we write the projections by hand. Each word's embedding marks its part of speech
# (determiner, noun, verb, adverb) plus one feature of meaning. The keys simply announce the
# part of speech ($W^K$ copies it). The queries encode a small grammar: a determiner looks for
# its noun, a noun for its verb, a verb for its subject noun, an adverb for the verb it
# modifies. The values carry the meaning features ("animal", "sound").

# %%
words = ["The", "dog", "barked", "loudly"]
#                det noun verb adv | animal sound
X = np.array([[1, 0, 0, 0, 0.0, 0.0],  # The
              [0, 1, 0, 0, 1.0, 0.0],  # dog
              [0, 0, 1, 0, 0.0, 1.0],  # barked
              [0, 0, 0, 1, 0.0, 0.5]])  # loudly  # fmt: skip
pos = slice(0, 4)  # the part-of-speech features
W_K = np.zeros((6, 4))
W_K[pos] = np.eye(4)  # key = "I am a det / noun / verb / adverb"
looks_for = {0: 1, 1: 2, 2: 1, 3: 2}  # det -> noun, noun -> verb, verb -> noun, adverb -> verb
W_Q = np.zeros((6, 4))
for have, want in looks_for.items():
    W_Q[have, want] = 4.0  # query = "I want a ..."; 4.0 makes the choice clear
W_V = np.zeros((6, 2))
W_V[4:, :] = np.eye(2)  # value = the meaning features (animal, sound)

Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (T=4, 4), (T=4, 4), (T=4, 2)
qkv = reference_numpy.attention(Q, K, V, score="scaled_dot")  # softmax(Q K^T / sqrt(4)) V
table([(w, *row) for w, row in zip(words, qkv.weights, strict=True)], ["query", *words])
print()
for w, row, ctx in zip(words, qkv.weights, qkv.context, strict=True):
    target = words[row.argmax()]
    print(f"{w:>7} looks at {target:<7} ({row.max():.2f}); context (animal, sound) = {ctx}")

expected = ["dog", "barked", "dog", "barked"]
assert [words[i] for i in qkv.weights.argmax(1)] == expected
assert np.allclose(qkv.weights.max(1), np.exp(2) / (np.exp(2) + 3))  # 0.711
out = attend(*(torch.tensor(a)[None] for a in (Q, K, V)))
assert np.allclose(out.weights[0].numpy(), qkv.weights)

# %% [markdown]
# "barked" looks at "dog" (the barker), and its context vector is now mostly "animal": the verb
# has gathered information about its subject. "loudly" looks at "barked" and picks up "sound".
# The same embeddings with different $W^Q$ would ask different questions, which is what
# multi-head attention exploits (lesson 3). Scores of 4 / √4 = 2 against 0 give the chosen word
# $e^2/(e^2+3) \approx 0.71$ of the weight; the rest is spread evenly.
#
# ## 5. Score functions side by side
#
# Step 1 need not be a dot product. attnkit has the classic score functions (Luong et al. 2015,
# §3.1, eq. 8 and 9; Bahdanau et al. 2015, App. A.1.2; Vaswani et al. 2017, eq. 1):
#
# | name | score(q, k) | parameters |
# |---|---|---|
# | `dot` | $q \cdot k$ | none |
# | `scaled_dot` | $q \cdot k / \sqrt{d_k}$ | none |
# | `GeneralScore` | $q^\top W k$ | $W$ |
# | `AdditiveScore` | $v^\top \tanh(W_1 k + W_2 q + b)$ | $W_1, W_2, b, v$ |
# | `LocationScore` | $(W q)_j$, from the query alone | $W$ (one row per position) |
#
# We score the query "sat" against the six words of "The cat sat on the mat". The learned
# scores get fixed random weights (seed 0); `GeneralScore` with $W = I$ is exactly `dot`.

# %%
torch.manual_seed(0)
xs = torch.tensor(SENTENCE_EMBEDDINGS, dtype=torch.float32)[None]  # (B=1, T=6, D=3)
query = xs[:, 2:3]  # "sat": (B=1, Tq=1, D=3)
general = GeneralScore(3)
additive = AdditiveScore(3, 3, 8)
location = LocationScore(3, max_keys=6)
identity = GeneralScore(3)
with torch.no_grad():
    identity.W.weight.copy_(torch.eye(3))

score_fns = {
    "dot": "dot",
    "scaled_dot": "scaled_dot",
    "general W=I": identity,
    "general": general,
    "additive": additive,
    "location": location,
}
results = {}
with torch.no_grad():
    for name, fn in score_fns.items():
        o = attend(query, xs, xs, score=fn, return_scores=True)
        results[name] = (o.scores[0, 0].numpy(), o.weights[0, 0].numpy())
print("scores of the query 'sat'")
table([(n, *s) for n, (s, _) in results.items()], ["", *SENTENCE], width=12)
print("\nweights (softmax of those scores)")
table([(n, *w) for n, (_, w) in results.items()], ["", *SENTENCE], width=12)
assert np.allclose(results["general W=I"][0], results["dot"][0], atol=1e-6)
assert max(results["general"][1].max(), results["additive"][1].max()) < 0.2  # untrained: flat
assert np.allclose(results["scaled_dot"][0], results["dot"][0] / np.sqrt(3), atol=1e-6)

# %% [markdown]
# With $W = I$ the general score reproduces the dot product exactly, and scaling divides every
# score by $\sqrt{3}$. The untrained `general` and `additive` scores are almost flat (no weight
# above 0.2, where uniform is 0.167): their parameters are random, and only training makes them
# prefer the right keys. Dot-product scores need no training but, as in section 3, prefer "mat".
#
# The location score never looks at the keys' content (Luong et al. 2015, eq. 9: $a_t =
# \mathrm{softmax}(W_a h_t)$). Shuffle the keys and its scores do not move, while a
# content-based score's scores move with the words:

# %%
shuffled = xs[:, torch.tensor([5, 4, 3, 2, 1, 0])]  # the same words, reversed
with torch.no_grad():
    loc_before = attend(query, xs, xs, score=location, return_scores=True).scores
    loc_after = attend(query, shuffled, shuffled, score=location, return_scores=True).scores
    add_before = attend(query, xs, xs, score=additive, return_scores=True).scores
    add_after = attend(query, shuffled, shuffled, score=additive, return_scores=True).scores
print("location, keys in order:", loc_before[0, 0].numpy())
print("location, keys reversed:", loc_after[0, 0].numpy())
print("additive, keys reversed:", add_after[0, 0].numpy(), "(the in-order scores, reversed)")
assert torch.equal(loc_before, loc_after)
assert torch.allclose(add_after, add_before.flip(-1))

# %% [markdown]
# ## 6. Normalisers side by side
#
# Step 3 turns a row of scores into weights. Softmax (Bahdanau et al. 2015, eq. 6) gives every
# key some weight. The alternatives:
#
# * **sparsemax** (Martins & Astudillo 2016, eq. 2): the closest point of the probability
#   simplex to the scores; low scores get exactly 0;
# * **entmax-1.5** (Peters et al. 2019): between softmax and sparsemax, sparse but smoother;
# * **hard**: one-hot on the argmax (with the softmax's gradient, "straight-through");
# * **gumbel** (Jang et al. 2017): add Gumbel noise, then take the argmax, a *random* hard choice
#   whose probabilities are the softmax's;
# * **sample** (Xu et al. 2015, §4.1): draw one key from the softmax distribution (trained with
#   REINFORCE).
#
# All act on the same six scores below.

# %%
row = torch.tensor([[2.0, 1.4, 1.0, 0.3, -0.5, -1.0]])  # one query's scores over six keys
keys = ["k1", "k2", "k3", "k4", "k5", "k6"]
gen = torch.Generator().manual_seed(0)
normalisers = {
    "softmax": {},
    "sparsemax": {},
    "entmax15": {},
    "hard": {},
    "gumbel": {"generator": gen},
    "sample": {"generator": gen},
}
identity_values = torch.eye(6)[None]  # values = one-hot keys, so context = weights
norm_weights = {}
for name, options in normalisers.items():
    # a "dot" score of a one-hot query against keys that hold the scores returns the scores
    o = attend(
        torch.ones(1, 1, 1),  # (B=1, Tq=1, D=1)
        row.T[None],  # (B=1, Tk=6, D=1): key j holds score j
        identity_values,
        score="dot",
        normaliser=name,
        normaliser_options=options or None,
    )
    norm_weights[name] = o.weights[0, 0].numpy()
table([(n, *w) for n, w in norm_weights.items()], ["", *keys])

nw = norm_weights
assert (nw["softmax"] > 0).all()
assert (nw["sparsemax"] == 0).sum() > (nw["entmax15"] == 0).sum() > 0
for name in normalisers:
    assert abs(nw[name].sum() - 1) < 1e-6, name
for name in ("hard", "gumbel", "sample"):
    assert sorted(nw[name].tolist()) == [0, 0, 0, 0, 0, 1], name
assert nw["hard"].argmax() == 0

# %%
fig, axes = plt.subplots(1, 6, figsize=(14, 2.6), sharey=True)
for ax, (name, w) in zip(axes, norm_weights.items(), strict=True):
    ax.bar(keys, w, color="tab:blue")
    ax.set_title(name)
    ax.set_ylim(0, 1.05)
axes[0].set_ylabel("weight")
fig.suptitle("the same scores (2.0, 1.4, 1.0, 0.3, -0.5, -1.0), six normalisers")
plt.tight_layout()
plt.show()

# %% [markdown]
# Sparsemax keeps only the keys whose score is above a threshold $\tau$ and gives them
# $s_j - \tau$ (Martins & Astudillo 2016, Algorithm 1). We can find $\tau$ by hand from the
# weights above, and check it against the NumPy reference:

# %%
support = nw["sparsemax"] > 0
tau = float((row[0].numpy()[support] - nw["sparsemax"][support]).mean())
print(f"support: {np.array(keys)[support].tolist()}, tau = {tau:.3f}")
assert np.allclose(nw["sparsemax"], np.maximum(row[0].numpy() - tau, 0), atol=1e-6)
assert np.allclose(reference_numpy.sparsemax_row(row[0].numpy()), nw["sparsemax"], atol=1e-6)

# %% [markdown]
# The random normalisers are right *on average*: drawn many times, `sample` (and `gumbel`)
# pick each key about as often as the softmax weight says.

# %%
n_draws = 4000
many = torch.ones(1, 1, n_draws, 1)  # (B=1, H=1, Tq=4000 identical queries, D=1)
keys_4d = row.T[None, None]  # (B=1, H=1, Tk=6, D=1)
values_4d = identity_values[None]  # (B=1, H=1, Tk=6, Dv=6)
for name in ("sample", "gumbel"):
    o = attend(
        many,
        keys_4d,
        values_4d,
        score="dot",
        normaliser=name,
        normaliser_options={"generator": torch.Generator().manual_seed(1)},
    )
    freq = o.weights[0, 0].mean(0).numpy()
    print(f"{name:>7} frequencies over {n_draws} draws:", freq)
    assert np.abs(freq - nw["softmax"]).max() < 0.03
print("softmax weights:                  ", nw["softmax"])

# %% [markdown]
# ## 7. The NumPy reference beside PyTorch
#
# `attnkit.attention.reference_numpy` computes attention in plain NumPy, one short function
# per step (`dot_score`, `scaled_dot_score`, `general_score`, `additive_score`,
# `location_score`, `apply_mask`, `softmax`, `sparsemax_row`, `entmax15_row`, `hard_row`,
# `weighted_sum`), and `attention(...)` returns every intermediate. It is written to be read
# and it is the oracle the PyTorch code is tested against. Here is one call, step by step, with
# a mask that hides the last two keys from the first query:

# %%
rng = np.random.default_rng(0)
qn, kn, vn = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
mask = np.ones((3, 5), dtype=bool)
mask[0, 3:] = False  # query 0 may not see keys 3 and 4 (True = may attend)
st = reference_numpy.attention(qn, kn, vn, mask, score="scaled_dot")
print("1. scores q·k\n", st.scores)
print(f"2. scaled by {st.scale:.3f} and masked\n", st.masked_scores)
print("3. softmax\n", st.weights)
print("4. context = weights @ values\n", st.context)
assert (st.weights[0, 3:] == 0).all() and np.allclose(st.weights.sum(1), 1)

# %% [markdown]
# Now every deterministic combination of score and normaliser, NumPy against PyTorch, on the
# same random inputs and mask. The learned scores' parameters go to NumPy as the PyTorch
# module's `state_dict`.

# %%
torch.manual_seed(0)
learned = {
    "general": GeneralScore(4, 4),
    "additive": AdditiveScore(4, 4, 6),
    "location": LocationScore(4, max_keys=5),
}
qt, kt, vt, mt = (torch.tensor(a)[None] for a in (qn, kn, vn, mask))  # add the batch axis
checked = 0
print(f"{'score':>11} {'normaliser':>10}  max |numpy - torch|")
for score in reference_numpy.SCORES:
    for normaliser in ("softmax", "sparsemax", "entmax15", "hard"):
        module = learned.get(score)
        params = None
        if module is not None:
            module = module.double()
            params = {n: p.detach().numpy() for n, p in module.state_dict().items()}
        ref = reference_numpy.attention(qn, kn, vn, mask, score, normaliser, params)
        with torch.no_grad():
            out = attend(
                qt, kt, vt, mt, score=module if module is not None else score, normaliser=normaliser
            )
        gap = max(
            np.abs(out.weights[0].numpy() - ref.weights).max(),
            np.abs(out.context[0].numpy() - ref.context).max(),
        )
        print(f"{score:>11} {normaliser:>10}  {gap:.1e}")
        assert np.allclose(out.weights[0].numpy(), ref.weights, atol=1e-10)
        assert np.allclose(out.context[0].numpy(), ref.context, atol=1e-10)
        checked += 1
print(f"{checked} combinations agree")
assert checked == 20

# %% [markdown]
# All 20 combinations agree to within rounding error of float64. When you are unsure what a
# layer computes, write its NumPy twin and compare: that is how attnkit's own tests work.
#
# ## Summary
#
# * Attention = score → mask → normalise → weighted sum; the "Thinking Machines" numbers are
#   112, 96 → 14, 12 → 0.88, 0.12.
# * Scaling by $\sqrt{d_k}$ keeps the score variance near 1; without it softmax saturates.
# * Parameter-free self-attention follows vector length, not meaning: every word in "The cat sat
#   on the mat" attends most to "mat".
# * Learned $W^Q, W^K, W^V$ let a word ask a question (query), advertise an answer (key) and
#   pass on content (value).
# * Scores and normalisers are interchangeable parts; sparse and hard normalisers put exact
#   zeros on keys.
#
# ## Exercises
#
# 1. **Change the gap.** In section 2, which dot product for "Machines" would give it a weight
#    of exactly 0.5? And 0.25? *Hint:* the softmax of two scores is $1/(1+e^{-(s_1 - s_2)})$;
#    remember the division by 8.
# 2. **Normalise the cat.** Repeat section 3 with each embedding divided by its length (unit
#    vectors). Which word does each word attend to most now? Why? *Hint:* for unit vectors
#    $x_i \cdot x_j$ is a cosine, largest for $j = i$.
# 3. **Rewrite the grammar.** In section 4, change `looks_for` so that "The" looks at
#    "barked" instead. Which single entry of `W_Q` do you change? Then raise 4.0 to 10.0: how
#    does the weight on the chosen word change, and why? *Hint:* $e^{s}/(e^{s} + 3)$ with
#    $s = $ score $/\sqrt{4}$.
# 4. **Temperature.** Multiply the scores of section 6 by 0.5 and by 3, and rerun the
#    normalisers. How many keys does sparsemax keep each time? *Hint:* sparsemax is not
#    invariant to scaling the scores, softmax's argmax is.
# 5. **Break the oracle.** In section 7, pass `scale=1.0` to `attend` for the `scaled_dot`
#    rows. Which assertion fails, and by how much? *Hint:* that is how a test proves it would
#    catch a dropped $1/\sqrt{d_k}$.
