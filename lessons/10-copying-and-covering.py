# %% [markdown]
# # Lesson 10: Copying and covering
#
# A summary reuses its document's words: names, numbers, technical terms. A decoder that can
# write only the words of its fixed vocabulary writes `<unk>` for a rare name, and it tends to
# say the same thing twice. See, Liu & Manning ("Get To The Point: Summarization with
# Pointer-Generator Networks", ACL 2017) give attention two more jobs to fix both:
#
# * **a pointer** (§2.2): the attention weights over the source double as a distribution for
#   *copying* a source word, and a soft switch $p_{gen}$ chooses between generating and
#   copying;
# * **coverage** (§2.3): the decoder keeps the sum of its past attention, reads it when it
#   scores the source, and pays a loss for attending again where it already has.
#
# **What you will learn**
#
# 1. The pointer's mixture (eq. 8-9) computed by hand on a five-word vocabulary, and why it can
#    write a word that the vocabulary lacks.
# 2. Coverage (eq. 10-12) stepped by hand: the running sum, the coverage term in the score,
#    and the coverage loss.
# 3. A pointer-generator (with and without coverage) and a seq2seq without the pointer,
#    trained in seconds on a generated copy task: the pointer writes a made-up name, the
#    seq2seq writes `<unk>`; and what coverage changes in where they look.
# 4. How to read the application's picture: attention per summary word, rows coloured by
#    $p_{gen}$, and the coverage strip.
#
# The model is the one of `task: summarization` (`attnkit.apps.summarization`); its real data,
# SciTLDR, and the full-size runs are on the [summarization page](../summarization.md).

# %%
import logging
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Image, display

import attnkit
from attnkit.apps.summarization.copytask import write_copy_task
from attnkit.apps.summarization.views import plot_summary_attention
from attnkit.attention import CoverageAttention, GenerationGate, coverage_loss, pointer_mixture

np.set_printoptions(precision=3, suppress=True)
torch.manual_seed(0)
logging.getLogger("attnkit.engine.epochs").setLevel(logging.ERROR)  # no line per epoch
TMP = tempfile.TemporaryDirectory(prefix="lesson10-")  # removed when Python exits
WORK = Path(TMP.name)
start = time.perf_counter()

# %% [markdown]
# ## 1. The pointer by hand
#
# At decoder step $t$ an attention decoder has the attention $a^t$ over the source words, the
# context $h^*_t = \sum_i a^t_i h_i$, its state $s_t$ and its input $x_t$, and it predicts
# $P_{vocab}$, a softmax over its fixed vocabulary. The pointer-generator adds one number, the
# **generation probability** (See et al., eq. 8)
#
# $$p_{gen} = \sigma\!\left(w_{h^*}^\top h^*_t + w_s^\top s_t + w_x^\top x_t + b_{ptr}\right)
# \in (0, 1),$$
#
# and mixes generating with copying (eq. 9):
#
# $$P(w) = p_{gen}\, P_{vocab}(w) + (1 - p_{gen}) \sum_{i:\, w_i = w} a^t_i .$$
#
# The second term sends each source position's attention to the word at that position. A
# source word outside the vocabulary gets an **extended id** $V, V+1, \dots$ for this source
# only, so $P$ runs over $V$ plus these ids, and $P_{vocab}$ is 0 on them: only copying can
# write them.
#
# Our vocabulary has five words (ids 0-4), and the source has four words, one of them,
# "kalolo", unknown: it gets the extended id $5 = V + 0$.

# %%
VOCAB = ["<unk>", "the", "model", "works", "."]  # ids 0-4
SOURCE = ["the", "kalolo", "model", "works"]
EXTENDED = VOCAB + ["kalolo"]  # id 5: the source's first (only) unknown word
source_ids = torch.tensor([[EXTENDED.index(w) for w in SOURCE]])  # (B=1, S=4)
p_vocab = torch.tensor([[0.1, 0.1, 0.4, 0.3, 0.1]])  # (1, V=5): the generator's softmax
weights = torch.tensor([[0.1, 0.6, 0.2, 0.1]])  # (1, S=4): the attention a^t
p_gen = torch.tensor([0.25])  # (1,): eq. (8)'s output, chosen by hand for now

P = pointer_mixture(p_vocab, weights, source_ids, p_gen, n_extended=1)  # (1, 6)
print("source ids:", source_ids.tolist()[0])
print(f"{'word':>7} {'P_vocab':>8} {'copy':>6} {'P(w)':>6}")
for i, word in enumerate(EXTENDED):
    generated = float(p_vocab[0, i]) if i < len(VOCAB) else 0.0
    copied = float(weights[0][source_ids[0] == i].sum())
    print(f"{word:>7} {generated:8.2f} {copied:6.2f} {float(P[0, i]):6.3f}")
print(f"sum of P: {float(P.sum()):.3f}")

assert source_ids.tolist() == [[1, 5, 2, 3]]
assert torch.isclose(P.sum(), torch.tensor(1.0))  # a distribution again
assert torch.isclose(P[0, 5], (1 - p_gen) * weights[0, 1])  # kalolo: copied only
assert torch.isclose(P[0, 2], p_gen * 0.4 + (1 - p_gen) * 0.2)  # model: both ways
assert torch.isclose(P[0, 4], p_gen * 0.1)  # ".": not in the source, generated only
assert int(P.argmax()) == 5  # the unknown word is the most likely next word

# %% [markdown]
# Read the table row by row:
#
# * **kalolo** has no $P_{vocab}$ at all; it gets $(1 - p_{gen}) \cdot a_{kalolo} = 0.75 \times
#   0.6 = 0.45$, and is the most likely word;
# * **model** and **works** are in both the vocabulary and the source, so they get both terms;
# * **"."** and **`<unk>`** are not in the source: only $p_{gen}\,P_{vocab}$.
#
# Because $P_{vocab}$ and $a^t$ each sum to 1, so does $P$. The switch has two extremes
# (drawn below; red: the vocabulary's ids, blue: the extended id):
# $p_{gen} = 1$ is the plain decoder ($P_{vocab}$ followed by zeros, "kalolo" impossible), and
# $p_{gen} = 0$ is pure pointing (only the source's words, in proportion to attention).

# %%
fig, axes = plt.subplots(1, 3, figsize=(9, 2.2), sharey=True)
for ax, g in zip(axes, (1.0, 0.25, 0.0), strict=True):
    mixed = pointer_mixture(p_vocab, weights, source_ids, torch.tensor([g]), 1)[0]
    ax.bar(range(6), mixed.numpy(), color=["tab:red"] * 5 + ["tab:blue"])
    ax.set_xticks(range(6), EXTENDED, fontsize=7, rotation=45)
    ax.set_title(f"p_gen = {g}", fontsize=9)
    if g == 1.0:
        assert torch.equal(mixed, torch.cat([p_vocab[0], torch.zeros(1)]))  # the plain decoder
    if g == 0.0:
        assert torch.isclose(mixed[5], torch.tensor(0.6)) and mixed[[0, 4]].sum() == 0
axes[0].set_ylabel("P(w)")
fig.tight_layout()
plt.show()

# %% [markdown]
# Where does $p_{gen}$ come from? Eq. 8 is a logistic regression on three vectors the decoder
# already has. `GenerationGate` holds its weights, named as in the paper; with every weight 0
# and $b_{ptr} = \ln(1/3)$ it gives exactly our 0.25, and in general it is the sigmoid of the
# sum of three dot products:

# %%
gate = GenerationGate(d_context=3, d_state=2, d_input=2)
with torch.no_grad():
    for linear in (gate.w_h, gate.w_s, gate.w_x):
        linear.weight.zero_()
    gate.b_ptr.fill_(np.log(1 / 3))
context, state, inputs = torch.randn(1, 3), torch.randn(1, 2), torch.randn(1, 2)
print("p_gen with zero weights:", gate(context, state, inputs).detach().numpy())
assert torch.isclose(gate(context, state, inputs), p_gen).all()

with torch.no_grad():
    for linear in (gate.w_h, gate.w_s, gate.w_x):
        linear.weight.normal_()  # any weights: eq. (8) by hand must agree
    logit = (
        context @ gate.w_h.weight[0] + state @ gate.w_s.weight[0] + inputs @ gate.w_x.weight[0]
    ) + gate.b_ptr
    print("p_gen with random weights:", gate(context, state, inputs).numpy())
    print("eq. (8) by hand:          ", torch.sigmoid(logit).numpy())
    assert torch.allclose(gate(context, state, inputs), torch.sigmoid(logit))

# %% [markdown]
# ## 2. Coverage by hand
#
# The **coverage** vector is the sum of the attention of all earlier steps (eq. 10):
#
# $$c^t = \sum_{t'=0}^{t-1} a^{t'}, \qquad c^0 = 0,$$
#
# so $c^t_i$ says how much attention source word $i$ has received so far. It enters the
# attention score as one more term (eq. 11, Bahdanau's additive score plus $w_c c^t_i$):
#
# $$e^t_i = v^\top \tanh\!\left(W_h h_i + W_s s_t + w_c\, c^t_i + b_{attn}\right), \qquad
# a^t = \mathrm{softmax}(e^t),$$
#
# and the **coverage loss** (eq. 12) charges the overlap of this step's attention with what
# was already covered:
#
# $$\mathrm{covloss}_t = \sum_i \min\!\left(a^t_i,\ c^t_i\right) \le 1 .$$
#
# It is 0 when step $t$ attends only to words nobody looked at, and 1 when it attends only
# where earlier steps already put at least as much. See et al. add it to the word's loss with
# weight $\lambda = 1$ (eq. 13).
#
# We build a `CoverageAttention` with one hidden unit, so that every weight is one number, and
# set them by hand: $W_s = 0$ and $b_{attn} = 0$, so the decoder asks **the same question at
# every step** (a stuck decoder, the kind that repeats itself), $W_h = 1$ and $v = 5$. The
# four annotations $h_i$ are single numbers too: the first word matches best.

# %%
WORDS = ["kalolo", "reports", "379", "cases"]
h = torch.tensor([[[1.0], [0.6], [0.3], [0.0]]])  # (B=1, S=4, D=1): the annotations h_i
mask = torch.ones(1, 4, dtype=torch.bool)
s = torch.zeros(1, 1)  # the decoder state s_t; W_s = 0 makes it irrelevant
attention = CoverageAttention(d_query=1, d_key=1, d_hidden=1)
with torch.no_grad():
    attention.score.W_query.weight.zero_()  # W_s
    attention.score.W_query.bias.zero_()  # b_attn
    attention.score.W_key.weight.fill_(1.0)  # W_h
    attention.score.v.weight.fill_(5.0)  # v


def four_steps(w_c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Attention, coverage before each step, and coverage loss of four steps with ``w_c``."""
    rows, covered, losses = [], [], []
    with torch.no_grad():
        attention.w_c.weight.fill_(w_c)
        c = CoverageAttention.initial_coverage(mask)  # c^0 = 0
        for _ in range(4):
            out = attention(s, h, mask=mask, coverage=c)  # eq. (11), (2)
            rows.append(out.weights[0].numpy())
            covered.append(c[0].numpy())
            losses.append(float(coverage_loss(out.weights, c)[0]))  # eq. (12)
            c = CoverageAttention.accumulate(c, out.weights)  # eq. (10): c^{t+1} = c^t + a^t
    return np.array(rows), np.array(covered), np.array(losses)


steps = {w_c: four_steps(w_c) for w_c in (0.0, -2.0)}
for w_c, (a, c, loss) in steps.items():
    print(f"w_c = {w_c}:{'':10}" + "".join(f"{w:>9}" for w in WORDS) + "   covloss")
    for t in range(4):
        print(f"  step {t}  a^t = " + "".join(f"{x:9.2f}" for x in a[t]) + f"   {loss[t]:.2f}")
        print("          c^t = " + "".join(f"{x:9.2f}" for x in c[t]))
    # the loss is exactly sum_i min(a_i, c_i), and c is the running sum of a
    assert np.allclose(loss, np.minimum(a, c).sum(1), atol=1e-6)
    assert np.allclose(c[1:], np.cumsum(a, 0)[:-1], atol=1e-6)

a0, _, loss0 = steps[0.0]
a2, _, loss2 = steps[-2.0]
assert np.allclose(a0, a0[0]) and a0[0].argmax() == 0  # stuck: the same answer, on kalolo
assert loss0[0] == 0 and np.allclose(loss0[1:], 1.0)  # every later step is fully charged
assert a2[1].argmax() != 0 and loss2[1] < 0.5  # with w_c < 0 the second step moves on
assert loss2[:3].sum() < loss0[:3].sum()

# %% [markdown]
# With $w_c = 0$ the score ignores coverage (eq. 11 becomes Bahdanau's eq. 1): the stuck
# decoder gets the same attention at every step, 0.69 on "kalolo", and from the second step on
# the coverage loss is the full 1. A decoder that attends to the same words again writes the
# same words again: the repetition See et al. set out to fix.
#
# With $w_c = -2$ a covered word's score drops, so the second step moves to "reports" and
# "379", and its loss falls to about a third. By the fourth step every word has been covered
# about once, and any attention overlaps the past again: the loss is meant for summaries
# shorter than their source. In a trained model nobody sets $w_c$: it is learnt, pushed by the
# coverage loss.

# %%
fig, axes = plt.subplots(1, 2, figsize=(8, 2.2), sharey=True)
for ax, (w_c, (a, _, loss)) in zip(axes, steps.items(), strict=True):
    ax.imshow(a, cmap="Greys", vmin=0, vmax=1)
    ax.set_xticks(range(4), WORDS, fontsize=7, rotation=30)
    ax.set_yticks(range(4), [f"step {t}: {x:.2f}" for t, x in enumerate(loss)], fontsize=8)
    ax.set_title(f"w_c = {w_c} (row label: covloss)", fontsize=9)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 3. Three tiny summarizers on a copy task
#
# `write_copy_task` writes a generated task that isolates copying: each "abstract" names a
# made-up system and a number in three sentences of a fixed form, and its summary is the name,
# a verb and the number:
#
# ```text
# source: we study the system of kalolo . it reports 379 cases in all . the results are good .
# target: kalolo reports 379 cases .
# ```
#
# Names come from 1,000 syllable triples and numbers from 990, so most of them are seen fewer
# than `min_count: 3` times and never enter the vocabulary: a model can write them only by
# copying. We train three tiny models (hidden size 16, 10 epochs, one thread) from one
# config that differs only in `model.copy` and `model.coverage`:
#
# | run | `copy` | `coverage` | |
# |---|---|---|---|
# | `pointer` | true | true | See et al.'s full model |
# | `pointer-no-coverage` | true | false | the pointer alone |
# | `seq2seq` | false | false | Bahdanau attention, every word generated |
#
# `attnkit.train` trains from a config file as `attnkit train` does, and returns the run.

# %%
paths = write_copy_task(WORK / "copy", sizes=(300, 20, 20), seed=0)
print((WORK / "copy" / "train.jsonl").read_text(encoding="utf-8").splitlines()[0])

CONFIG = f"""
task: summarization
data: {{train_path: {paths["train"]}, valid_path: {paths["valid"]}, test_path: {paths["test"]},
        min_count: 3, max_source: 40, max_target: 12}}
model: {{embed_dim: 16, hidden_dim: 16, attention_dim: 16, copy: COPY, coverage: COVERAGE}}
train: {{epochs: 10, batch_size: 16, learning_rate: 0.01, threads: 1, tensorboard: false,
         beam: 2, max_len: 10, valid_papers: 10, seed: 0}}
"""
MODELS = {"pointer": (True, True), "pointer-no-coverage": (True, False), "seq2seq": (False, False)}
runs = {}
for name, (copy, coverage) in MODELS.items():
    text = CONFIG.replace("COPY", str(copy).lower()).replace("COVERAGE", str(coverage).lower())
    config = WORK / f"{name}.yaml"
    config.write_text(f"name: copy-{name}{text}", encoding="utf-8")
    began = time.perf_counter()
    runs[name] = attnkit.train(config, WORK / "runs" / name)
    print(f"{name}: trained in {time.perf_counter() - began:.1f} s")

scores = {name: run.evaluate("test") for name, run in runs.items()}
print(f"{'model':>20} {'ROUGE-1':>8} {'ROUGE-2':>8} {'mean p_gen':>11}")
for name, r in scores.items():
    print(f"{name:>20} {r['rouge1']:8.1f} {r['rouge2']:8.1f} {r['p_gen']:11.3f}")
assert scores["pointer"]["rouge2"] > 90 and scores["pointer-no-coverage"]["rouge2"] > 90
assert scores["seq2seq"]["rouge2"] < 20

# %% [markdown]
# On the 20 test papers both pointers write the reference summaries; the seq2seq gets the
# shape right and the name and number wrong, hence its ROUGE-2 near 0 (no right bigram).
# Now a new abstract, with a name that is not even made of the task's syllables:
# `run.summarize` decodes it and returns, with the words, each step's attention over the
# source, $p_{gen}$ per step and the coverage.

# %%
ABSTRACT = "We study the system of Brixelon. It reports 314 cases in all. The results are good."
vocab = runs["pointer"].vocab
print("brixelon in the vocabulary:", "brixelon" in vocab, "| 314:", "314" in vocab)
assert "brixelon" not in vocab and "314" not in vocab
summaries = {name: run.summarize([ABSTRACT])[0] for name, run in runs.items()}
for name in ("pointer", "seq2seq"):
    print(f"{name:>8}: {summaries[name].text}")
assert summaries["pointer"].words == ["brixelon", "reports", "314", "cases", "."]
assert summaries["seq2seq"].words == ["<unk>", "reports", "<unk>", "cases", "."]

# %% [markdown]
# The pointer writes **brixelon** and **314**; the seq2seq writes **`<unk>`** for both. The
# seq2seq's vocabulary has no such words, and its encoder read both of them as `<unk>`. The
# pointer's encoder read `<unk>` there too, but the pointer does not need to know the word,
# only *where* it is. Each step's $p_{gen}$ and where its attention peaks:

# %%
pointer = summaries["pointer"]
rows = [*pointer.words, "</s>"]
print(f"{'word':>9} {'copied':>7} {'p_gen':>9}  attention peak")
for t, word in enumerate(rows):
    copied = pointer.copied[t] if t < len(pointer.words) else False
    peak = pointer.source[int(pointer.attention[t].argmax())]
    share = pointer.attention[t].max()
    print(f"{word:>9} {copied!s:>7} {pointer.p_gen[t]:9.1e}  {peak} ({share:.2f})")
print("seq2seq p_gen:", summaries["seq2seq"].p_gen)

assert pointer.copied == [True, False, True, False, False]  # the two unknown words
assert (pointer.p_gen[:-1] < 0.01).all() and pointer.p_gen[-1] > 0.99
assert [pointer.source[int(i)] for i in pointer.attention[:3].argmax(1)] == rows[:3]
assert np.all(summaries["seq2seq"].p_gen == 1)  # no pointer: every word generated

# %% [markdown]
# $p_{gen}$ is tiny at every word: the trained pointer **copies all five**, even "reports",
# "cases" and ".", which it could also generate, and each step's attention peaks on the very
# word it writes. Only "brixelon" and "314" are *copied* in `Summary.copied`'s sense (outside
# the vocabulary, so only the pointer can write them). At the end step, `</s>`, $p_{gen}$ is
# about 1: the end of the summary is not in the source, so only the generator can write it.
# The seq2seq has no gate; its $p_{gen}$ is reported as 1 at every step.
#
# And coverage? Sum eq. 12 over each summary's steps, computing $c^t$ from the attention the
# summary carries:

# %%
total_loss, peaks = {}, {}
for name, summary in summaries.items():
    a = summary.attention  # (T, S): every step, the end step included
    c = np.cumsum(a, 0) - a  # c^t: the steps before t (eq. 10)
    per_step = np.minimum(a, c).sum(1)  # eq. (12)
    total_loss[name] = per_step.sum()
    peaks[name] = [summary.source[int(i)] for i in a.argmax(1)]
    print(f"{name:>20}: covloss per step {per_step.round(2)}, peaks {peaks[name]}")
assert total_loss["pointer"] < 0.5 < 0.8 < total_loss["pointer-no-coverage"]
assert total_loss["seq2seq"] > 1.5
assert peaks["seq2seq"].count("314") >= 3

COPIED = ("brixelon", "reports", "314", "cases")  # the words of steps 0-3, each once in the source
end_step = {}
for name in ("pointer", "pointer-no-coverage"):
    end = dict(zip(summaries[name].source, summaries[name].attention[-1], strict=True))
    end_step[name] = {w: round(float(end[w]), 3) for w in COPIED}
    print(f"{name:>20}: the end step's attention on the copied words {end_step[name]}")
assert max(end_step["pointer"].values()) < 0.01
assert sum(end_step["pointer-no-coverage"].values()) > 0.5

# %% [markdown]
# The pointer trained with coverage attends to each source word once: its summed coverage
# loss is small. Even its end step, which copies nothing, keeps off the words already copied
# (0.001 each) and spreads over the rest. The pointer without coverage copies the same five
# words, but its end step looks again at a word it has already copied, "cases" (a loss of
# about 1 at `</s>`). The seq2seq's
# attention, which nothing forces to point, piles up on the number: three or more of its six
# steps peak on "314", and its loss is the largest. On this task repeated attention costs
# nothing visible, since every summary has the same form; on real summaries it is what writes
# the same phrase twice. (Training seeds 0, 1 and 2 gave the same order, each time with the
# pointer's total below 0.3, the pointer without coverage's about 1 and the seq2seq's above
# 2.)
#
# ## 4. The picture
#
# `plot_summary_attention` draws a `Summary` as `attnkit predict --picture`, the run report
# and the explorer do (See et al., Fig. 1 and 7).

# %%
for name in ("pointer", "seq2seq"):
    picture = plot_summary_attention(
        summaries[name], WORK / f"{name}.png", title=f"{name}: attention (label colour: p_gen)"
    )
    display(Image(filename=picture))
    coverage = dict(zip(summaries[name].source, summaries[name].coverage, strict=True))
    print(f"{name} coverage:", {w: round(float(coverage[w]), 2) for w in COPIED})
    if name == "pointer":
        assert all(abs(coverage[w] - 1) < 0.05 for w in COPIED)  # each once
    else:
        assert coverage["314"] > 1.5 and coverage["314"] == max(coverage.values())
print(f"lesson cells so far: {time.perf_counter() - start:.0f} s")

# %% [markdown]
# * **Top**: one row per summary word (and `</s>` last), one column per source word; darker
#   grey is more attention. The pointer's rows form a diagonal, each on the word it writes.
# * **Row labels** are coloured by $p_{gen}$ (matplotlib's `coolwarm`): **blue** for copied
#   ($p_{gen}$ near 0), **red** for generated (near 1). The pointer's five words are blue, its
#   `</s>` red; every seq2seq row is red. The pointer's `</s>` row is pale grey over every
#   word except the four it has copied: the coverage-trained end step spreads its attention
#   over what is not yet covered.
# * **Bottom strip**: the coverage after the last step, $\sum_t a^t_i$, how much attention each
#   source word got in all. The pointer's is 1.0 on "brixelon", "reports", "314" and "cases"
#   (and about 0.4 on each full stop, for the "." it wrote): each word once. The
#   seq2seq's is above 1 on three words and darkest on "314", which it attended at several
#   steps: the mark of repetition.
#
# ## Summary
#
# | | what it adds | eq. | what it buys |
# |---|---|---|---|
# | pointer | $p_{gen}$ mixes $P_{vocab}$ with the attention | 8-9 | words outside the vocabulary |
# | coverage | the running sum of attention, in the score and a loss | 10-13 | less repetition |
#
# ## What to try
#
# 1. **The real data.** `configs/scitldr-pointer-generator.yaml` trains the same model on
#    SciTLDR-A (abstracts to one-sentence TLDRs), about two minutes an epoch on one CPU
#    thread: `attnkit train configs/scitldr-pointer-generator.yaml -o runs/pg-cov`, then
#    `attnkit evaluate runs/pg-cov --split test` and `attnkit predict runs/pg-cov abstract.txt
#    --picture summary.png`. Does the mean `p_gen` that `evaluate` prints stay near 0, as
#    on the copy task? SciTLDR's TLDRs are abstractive: on test, 66% of the bigrams of a
#    paper's first TLDR are not in its abstract.
# 2. **Switch the mechanisms.** `--set model.coverage=false` gives the pointer alone, and
#    `--set model.copy=false --set model.coverage=false` the seq2seq; compare ROUGE and the
#    share of repeated trigrams (`repeated_trigrams` in `attnkit evaluate`).
# 3. **Coverage as a last phase.** See et al. trained without the coverage loss and added it
#    for a short last phase (§5). `train.coverage_from` is the epoch from which the loss
#    counts: train the `pointer` config of section 3 again with
#    `attnkit.train(config, WORK / "runs" / "late", overrides=["train.coverage_from=8"])`
#    (10 epochs, so coverage counts in the last three), and compute the summed coverage
#    loss of its summary again.
# 4. **Make the vocabulary bigger.** Set `min_count: 1` in the copy task's config: now most
#    names and numbers of the training papers are in the vocabulary. Does the seq2seq still
#    write `<unk>` for Brixelon? Does the pointer's $p_{gen}$ change?
# 5. **A stuck decoder, learnt.** In section 2, try $w_c = -5$ and $w_c = +2$. Which sign
#    helps, and why does a positive $w_c$ make the coverage loss worse?
