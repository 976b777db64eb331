# %% [markdown]
# # Lesson 5: Can attention be trusted?
#
# Attention weights are easy to draw, and a picture of a model "looking at" the right word is
# persuasive. But the weights are an intermediate quantity of a network, not a report of why it
# decided. This lesson trains a small classifier whose correct explanation we *know*, and
# tests its attention against that truth and against the model's own behaviour; then it reads
# a translation model's attention as a word alignment and scores it against human gold links.
#
# **What you will learn**
#
# 1. TF-IDF as *static* attention, fixed before training, against the *learned* token weights
#    of a BiGRU with attention pooling (Yang et al. 2016).
# 2. The example "the film was never dull", where the model is right and its attention points
#    at the wrong word, and why.
# 3. The faithfulness tests of Jain & Wallace 2019 and Serrano & Smith 2019: rank agreement
#    with gradient and leave-one-out importance, permuting the weights, erasing tokens, and
#    the attention mass on the true rationale.
# 4. Attention as word alignment: the alignment error rate (AER, Och & Ney 2003) on the RWTH
#    German-English gold, against a diagonal baseline that uses no model at all.
#
# Everything trains here, on the CPU, in about a minute.

# %%
import json
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import attnkit
from attnkit.apps.classification.app import APP
from attnkit.apps.classification.classifier import TextClassifier
from attnkit.apps.classification.data import load_split
from attnkit.apps.classification.faithfulness import (
    attention_and_importance,
    faithfulness_table,
    permutation_tvd,
)
from attnkit.apps.classification.token_weights import TfidfBaseline
from attnkit.apps.translation.align.aer import (
    default_rwth_tarball,
    diagonal_links,
    run_word_attention,
    score_methods,
)
from attnkit.metrics.aer import alignment_error_rate, read_rwth_deen

# The shared data sets live in ../shared/data beside the repository; this notebook runs in an
# empty temporary directory, so point attnkit there explicitly (unless the caller already did).
REPO = Path(attnkit.__file__).resolve().parents[2]
os.environ.setdefault("ATTNKIT_DATA_DIR", str(REPO.parent / "shared" / "data"))
np.set_printoptions(precision=3, suppress=True)
WORK = Path(tempfile.mkdtemp(prefix="attnkit-lesson05-"))  # run directories go here
print("data:", os.environ["ATTNKIT_DATA_DIR"], "  runs:", WORK)

# %% [markdown]
# ## 1. A data set whose explanations are known
#
# On real data nobody knows which words *really* decided a label, so "the attention points at
# the right words" cannot be checked. attnkit's generated sentiment data
# (`attnkit.apps.classification.rationales`) fixes that: each sentence's label is computed from
# a few marked words, its **rationale** (in the spirit of the ERASER benchmark, DeYoung et al.
# 2020):
#
# * cue words carry the sentiment: *great, superb, ...* positive; *dull, awful, ...* negative;
# * a negator directly before a cue flips it: *not great* is negative;
# * distractors look salient but carry nothing: intensifiers (*really*) and negated *neutral*
#   words (*never old*).
#
# The config `configs/rationales-bigru.yaml` generates 4,000 training, 500 dev and 500 test
# sentences. Below, the rationale words are in [brackets].

# %%
config = REPO / "configs" / "rationales-bigru.yaml"
cfg = APP.load_config(config)  # the typed config, checked field by field
train, test = load_split(cfg, "train"), load_split(cfg, "test")
print(f"{len(train)} training and {len(test)} test sentences")
for example in train[:5]:
    words = [f"[{w}]" if i in example.rationale else w for i, w in enumerate(example.text.split())]
    print(f"label {example.label}: {' '.join(words)}")
assert (len(train), len(test)) == (4000, 500)

# %% [markdown]
# ## 2. Static attention: TF-IDF
#
# TF-IDF gives each word a weight fixed before any training on the task: frequent in this
# sentence, rare in the corpus (Spärck Jones 1972). Normalised over a sentence's words it is an
# attention distribution that never looks at the context, "static attention". With logistic
# regression on top it is also a classifier: the baseline every learned model must beat.

# %%
tfidf = TfidfBaseline.fit([e.text for e in train], [e.label for e in train])
tfidf_accuracy = tfidf.accuracy([e.text for e in test], [e.label for e in test])
print(f"TF-IDF + logistic regression, test accuracy: {tfidf_accuracy:.1%}")
assert 0.6 < tfidf_accuracy < 0.75

# %% [markdown]
# About two thirds right: a bag of words cannot see that *not* flips the *next* word, and a
# third of the cues are negated.
#
# ## 3. Learned attention: a BiGRU with attention pooling
#
# The model of Yang et al. 2016 (eqs. 5-7): a bidirectional GRU reads the sentence into states
# $h_t$, each word gets a score $u_t = \tanh(W h_t + b)$, the weights are
# $a_t = \mathrm{softmax}_t(u_t \cdot u_w)$ against a learned context vector $u_w$, and the
# classifier sees $s = \sum_t a_t h_t$. The weights $a_t$ are the "token weights" people draw.
#
# `attnkit.train` trains from the config (four epochs, about 15 s on 2 cores), with overrides
# like the command line's `--set`. We ask for float32 throughout (`train.bf16=false`): the
# default, `auto`, uses bfloat16 on CPUs that compute it natively, and then the weights, and
# even which word gets the attention, differ from machine to machine.

# %%
run_dir = WORK / "rationales-bigru"
overrides = ["train.bf16=false", "train.tensorboard=false"]
summary = attnkit.train(config, run_dir, overrides=overrides)
print(summary)
clf = TextClassifier.load(run_dir)
bigru_accuracy = clf.accuracy([e.text for e in test], [e.label for e in test])
print(f"BiGRU + attention, test accuracy: {bigru_accuracy:.1%}")
assert bigru_accuracy > 0.97

# %% [markdown]
# The BiGRU gets (almost) every test sentence right, TF-IDF two thirds. Where does each put its
# weight? On plain sentences the learned attention is exactly what we would hope:

# %%
labels, weights = clf.predict(["the film was dull", "the acting was really great"])
for label, pairs in zip(labels, weights, strict=True):
    print(f"says {label}: " + "  ".join(f"{t}:{w:.2f}" for t, w in pairs))
assert labels == [0, 1]
assert max(weights[0], key=lambda p: p[1])[0] == "dull"
assert max(weights[1], key=lambda p: p[1])[0] == "great"

# %% [markdown]
# ## 4. "the film was never dull"
#
# Now a negated cue, the example of attnkit's documentation of text classification
# (`attnkit classification token-weights runs/rationales-bigru "the film was never dull"`
# prints the same two rows as below). The model must read *never dull* as positive.

# %%
sentence = "the film was never dull"
(label,), (pairs,) = clf.predict([sentence])
tokens = [t for t, _ in pairs]
attention = np.array([w for _, w in pairs])
_, static = tfidf.token_weights(sentence)
tfidf_label = int(tfidf.predict([sentence])[0])
print(f"BiGRU says {label} (positive);  TF-IDF + LR says {tfidf_label}")
print(f"{'':>10}" + "".join(f"{t:>8}" for t in tokens))
print(f"{'attention':>10}" + "".join(f"{w:>8.3f}" for w in attention))
print(f"{'TF-IDF':>10}" + "".join(f"{w:>8.3f}" for w in static))
was, never, dull = tokens.index("was"), tokens.index("never"), tokens.index("dull")
assert label == 1 and tfidf_label == 0
assert attention[was] > 0.5 and attention[never] < 0.01 and attention[dull] < 0.01

# %% [markdown]
# The model is right, TF-IDF wrong (its largest weight is on *dull*, its prediction negative).
# But the model's attention puts most of its weight on **was** (0.78 when this lesson was
# written: see the printout for this run), and next to nothing on **never** and **dull**, the
# two words that decide the label. Read as an explanation, the picture says "the film is
# positive because of *was*", which is absurd.
#
# The behaviour of the model says otherwise. Erase one word at a time and watch the
# prediction (leave-one-out; `attention_and_importance` also computes gradient × input,
# $|\partial p_{\hat y}/\partial e_t \cdot e_t|$, Jain & Wallace 2019 §4.1):

# %%
item = clf.encode([sentence])[0]
importance = attention_and_importance(clf, item)
erased = clf.probabilities([item.without(i) for i in range(len(tokens))])  # (T, 2)
gradient_share = importance["gradient"] / importance["gradient"].sum()  # sums to 1
print(f"{'erase':>8} {'p(positive)':>12} {'attention':>10} {'grad x input':>13} {'LOO (TVD)':>10}")
for i, token in enumerate(tokens):
    print(
        f"{token:>8} {erased[i, 1]:>12.3f} {attention[i]:>10.3f} "
        f"{gradient_share[i]:>13.3f} {importance['loo'][i]:>10.3f}"
    )
print(f"{'(none)':>8} {importance['probs'][1]:>12.4f}")
print(f"largest raw gradient x input: {importance['gradient'].max():.1e}")
assert erased[never, 1] < 0.5 and erased[dull, 1] < 0.5  # erasing either flips it
assert erased[was, 1] > 0.99  # erasing the most-attended word changes nothing
assert gradient_share[was] > 0.2 and gradient_share[dull] < 0.05
assert importance["gradient"].max() < 1e-2 and importance["probs"][1] > 0.999

# %%
rows = {
    "attention": attention,
    "TF-IDF": static,
    "gradient x input": gradient_share,
    "leave-one-out": importance["loo"] / importance["loo"].sum(),
}
fig, axes = plt.subplots(len(rows), 1, figsize=(6, 4.6))
for ax, (name, values) in zip(axes, rows.items(), strict=True):
    ax.imshow(values[None], cmap="Reds", vmin=0, vmax=values.max(), aspect="auto")
    ax.set_xticks(range(len(tokens)), tokens if ax is axes[-1] else [])
    ax.set_yticks([0], [name])
    for j, w in enumerate(values):
        colour = "white" if w > 0.6 * values.max() else "black"
        ax.text(j, 0, f"{w:.2f}", ha="center", va="center", fontsize=9, color=colour)
fig.suptitle(f'"{sentence}": four answers to "which word mattered?" (each row sums to 1)')
plt.tight_layout()
plt.show()

# %% [markdown]
# Erasing *never* or *dull* flips the prediction; erasing *was*, the word with most of the
# attention, changes nothing. Gradient × input is no better: it splits its mass mainly between
# *was* and *never* and gives *dull* almost nothing, and its raw values are tiny because the
# model is saturated ($p = 0.9999$, where the softmax's gradient vanishes). Only leave-one-out,
# which asks the model directly, names the two words that decide the label.
#
# **Why?** The attention weights are over the GRU's *states*, not over words. The state at
# *was* is the concatenation of a forward GRU that has read "the film was" and a backward GRU
# that has read the sentence from the end, "dull", "never", "was": it already contains the
# negated cue (so do the backward halves of *the* and *film*). Putting the weight on
# that one state is a perfectly good way for the model to classify; it just is not a statement
# about the word printed under it. The weight sits on a *position*. This is the whole lesson:
# attention weights are not an explanation until they are tested (Jain & Wallace 2019;
# Wiegreffe & Pinter 2019).
#
# One more test on this sentence (Jain & Wallace 2019, §4.2): keep everything else fixed and
# shuffle the attention weights over the tokens. If the weights mattered in detail, the output
# should change a lot.

# %%
shuffle_tvd = float(permutation_tvd(clf, [item], n_perm=20)[0])
print(f"median output change (total variation) over 20 shuffles of the weights: {shuffle_tvd:.3f}")
assert shuffle_tvd > 0.01

# %% [markdown]
# Shuffling does move the output here (the total variation distance is between 0 and 1), so
# the weights are not irrelevant: *which* state gets the weight matters to the prediction, even
# though the word at that state does not.
#
# ## 5. The faithfulness table, over 200 test sentences
#
# One sentence is an anecdote. `faithfulness_table` (the Python side of
# `attnkit classification faithfulness RUN --split test --limit 200`) runs every test over many
# sentences:
#
# * **Kendall τ** between the attention weights and gradient × input, and between attention
#   and leave-one-out importance (Jain & Wallace 2019, §4.1): 1 would be the same ranking;
# * **permutation**: the output change when the weights are shuffled (§4.2);
# * **erasure** (Serrano & Smith 2019): how often deleting the most-attended token flips the
#   prediction, against deleting a random token;
# * **rationale mass**: the share of weight on the true rationale words, for attention,
#   TF-IDF and uniform weights.

# %%
table = faithfulness_table(clf, test[:200], baseline=tfidf)
for row in table:
    value = "n/a" if row.value is None else f"{row.value:.3f}"
    print(f"{row.measure:<45} {value:>6}   {row.detail}")
value = {row.measure: row.value for row in table}
tau_grad = value["Kendall tau: attention vs gradient x input"]
tau_loo = value["Kendall tau: attention vs leave-one-out"]
flip_top = value["erasure flip rate: most-attended token"]
flip_random = value["erasure flip rate: random token"]
mass = {k: value[f"rationale mass: {k}"] for k in ("attention", "TF-IDF", "uniform")}
assert 0.25 < tau_grad < 0.5 and 0.25 < tau_loo < 0.5
assert 0.15 < flip_top < 0.3 and flip_top > 2 * flip_random  # "about a fifth"
assert 0.6 < mass["attention"] < 0.8 and mass["TF-IDF"] < 0.2  # "about 0.7", "under 0.2"
assert 0.13 < mass["uniform"] < 0.15 and mass["TF-IDF"] > mass["uniform"]

# %% [markdown]
# How to read it (your digits may differ slightly from run to run of the training):
#
# * **On average attention finds the rationale**: about 0.7 of its weight lands on the true
#   rationale words, against under 0.2 for TF-IDF and about 0.14 for uniform weights. That is
#   far better than chance, and far better than static attention.
# * **Erasing the most-attended token flips the prediction far more often than erasing a
#   random one**, but only in about a fifth of the sentences: in most, the model survives
#   losing its "most important" word.
# * **Rank agreement is moderate**: a mean Kendall τ of roughly 0.3 to 0.45 with gradient ×
#   input and with leave-one-out (1 would be the same ranking, 0 none). The weights order the
#   tokens only partly the way the model's sensitivity does.
# * **Permutation**: the mean output change when the weights are shuffled is sizeable, but in a
#   good share of sentences (the detail column) shuffling changes the output by under 0.01.
#
# So attention here is neither useless nor an explanation: it is a signal that correlates with
# the truth and has to be checked, sentence by sentence, with tests like these.
#
# ## 6. Attention as word alignment
#
# Bahdanau et al. (2015) drew their decoder's attention as a soft alignment between source and
# target words. If attention explained translation, reading off each target word's most
# attended source word should give good word alignments. That can be measured: the RWTH
# German-English gold alignments (Vilar, Popović & Ney 2006) mark *sure* links $S$ and
# *possible* links $P \supseteq S$ on 508 Europarl sentence pairs, and the alignment error
# rate (Och & Ney 2003) of predicted links $A$ is
#
# $$\mathrm{AER} = 1 - \frac{|A \cap S| + |A \cap P|}{|A| + |S|} \quad (\text{lower is better}).$$
#
# First by hand on one sentence, with the **diagonal** baseline, which uses no model: target
# word $j$ of $T$ is linked to source word $\mathrm{round}((j + 0.5)\,S/T - 0.5)$.

# %%
gold_corpus = read_rwth_deen(default_rwth_tarball())
n_gold = len(gold_corpus.gold)
k = 163
src, tgt, gold = gold_corpus.source[k], gold_corpus.target[k], gold_corpus.gold[k]
print(f"German:  {src}\nEnglish: {tgt}")
print("gold sure links (German word, English word):", sorted(gold.sure))
diag = diagonal_links(len(src.split()), len(tgt.split()))
print("diagonal links:                             ", sorted(diag))
hits_sure, hits_possible = len(diag & gold.sure), len(diag & gold.possible)
aer_by_hand = 1 - (hits_sure + hits_possible) / (len(diag) + len(gold.sure))
print(
    f"AER = 1 - ({hits_sure} + {hits_possible}) / ({len(diag)} + {len(gold.sure)}) = "
    f"{aer_by_hand:.3f}"
)
assert n_gold == 508 and (hits_sure, len(gold.sure)) == (4, 6)
assert np.isclose(aer_by_hand, alignment_error_rate([gold], [diag]).aer)

# %% [markdown]
# German and English word order agree in most of this sentence, so the diagonal gets 4 of 6
# links; it misses the swap *dies erwartet* / *expecting that*. Over all 508 sentences:

# %%
diagonal_all = [
    diagonal_links(len(s.split()), len(t.split()))
    for s, t in zip(gold_corpus.source, gold_corpus.target, strict=True)
]
diagonal_scores = alignment_error_rate(gold_corpus.gold, diagonal_all)
print("diagonal baseline:", diagonal_scores.summary())
assert round(100 * diagonal_scores.aer, 1) == 74.5

# %% [markdown]
# The diagonal's AER is 74.5%. A model's attention should do better than that to count as an
# alignment. We train a tiny de→en Transformer (2 + 2 layers of width 64, 120 updates of about
# 2,000 tokens on Tatoeba's everyday sentences, under a minute), force-decode each gold English
# sentence with it (teacher forcing), average its cross-attention over layers and heads, merge
# subword pieces into words, and link each English word to its most attended German word
# ("argmax") or to every German word above a threshold.

# %%
mt_run = WORK / "tatoeba-tiny"
tiny = [
    "model.d_model=64",
    "model.num_heads=2",
    "model.d_ff=128",
    "model.encoder_layers=2",
    "model.decoder_layers=2",
    "data.vocab_size=2000",
    "train.max_steps=120",
    "train.max_tokens=2000",
    "train.warmup_steps=50",
    "train.learning_rate=0.002",
    "train.valid_bleu=false",
    "train.tensorboard=false",
    "train.bf16=false",
]
print(attnkit.train(REPO / "configs" / "tatoeba-transformer.yaml", mt_run, overrides=tiny))
valid_loss = json.loads((mt_run / "metrics.json").read_text())["history"][-1]["valid_loss"]
print(f"validation loss {valid_loss:.2f} nats per piece (uniform: ln 2000 = {np.log(2000):.2f})")
assert valid_loss < np.log(2000)  # it has learned something, not much
pairs = list(zip(gold_corpus.source, gold_corpus.target, strict=True))
forward = run_word_attention(mt_run, pairs, layer="mean", want=("de", "en"))  # (T_en, S_de) each
aer_rows = score_methods(gold_corpus.gold, forward, thresholds=(0.1, 0.2))
print(f"\n{'method':<22} {'AER':>6} {'precision':>10} {'recall':>7}")
for row in aer_rows:
    s = row.scores
    print(f"{row.method:<22} {100 * s.aer:>6.1f} {100 * s.precision:>10.1f} {100 * s.recall:>7.1f}")
aer = {row.method: row.scores.aer for row in aer_rows}
assert aer["diagonal (no model)"] == diagonal_scores.aer
assert min(aer["argmax"], aer["threshold 0.1"], aer["threshold 0.2"]) > aer["diagonal (no model)"]

# %%
w = forward[k].numpy()  # (T_en, S_de) for the sentence above
fig, ax = plt.subplots(figsize=(5.5, 4.5))
ax.imshow(w, cmap="Greys", vmin=0, vmax=w.max())
for de, en in gold.sure:
    ax.plot(de, en, "o", mfc="none", mec="tab:green", ms=14, mew=2)
for en, de in enumerate(w.argmax(1)):
    ax.plot(de, en, "x", color="tab:red", ms=9, mew=2)
ax.set_xticks(range(len(src.split())), src.split(), rotation=40, ha="right")
ax.set_yticks(range(len(tgt.split())), tgt.split())
ax.set(
    xlabel="German (source, keys)",
    ylabel="English (target, queries)",
    title="tiny model's attention (grey); gold (o) vs argmax (x)",
)
plt.tight_layout()
plt.show()

# %% [markdown]
# Every extraction from the tiny model's attention is *worse* than the diagonal, which uses no
# model at all. That is not a bug of the tiny model alone: attnkit's documentation ("Alignments
# and AER") reports the same for models trained for 12-19 minutes on all of Tatoeba (a biGRU
# with Bahdanau attention and a 3 + 3 layer Transformer): no extraction beat the diagonal's 74.5,
# while Luong et al. 2015 report 34-39 for large models trained on WMT. Small models trained
# on short everyday sentences, read on long parliamentary prose, do not give attention that
# aligns words better than "assume the word orders match". Attention that *looks* like an
# alignment in a picture still has to be scored against gold before it is called one.
#
# ## Summary
#
# * TF-IDF is static attention: fixed weights, blind to context (two thirds right on this data,
#   where the BiGRU is almost always right).
# * The BiGRU's learned attention lands mostly on the true rationale, on average; yet on
#   "the film was never dull" it puts almost everything on *was*, and erasing *was* changes
#   nothing while erasing *never* or *dull* flips the prediction. The weight is on a state, not
#   a word.
# * Faithfulness tests (rank agreement, permutation, erasure, rationale mass) turn "looks
#   right" into numbers; here they show a useful but partial signal.
# * Read as word alignments, a small model's attention scores worse than the diagonal baseline
#   (AER 74.5%) on the RWTH gold.
#
# ## Exercises
#
# 1. **Comprehensiveness and sufficiency** (DeYoung et al. 2020, ERASER). For each of the first
#    100 test sentences, delete the *two* most-attended tokens and measure the drop in the
#    predicted class's probability (comprehensiveness); then keep *only* those two tokens
#    (sufficiency). *Hint:* `item.without(i)` deletes one token; call it twice (largest index
#    first); `clf.probabilities(items)` gives the probabilities.
# 2. **A Transformer instead.** Train `configs/rationales-transformer.yaml` the same way and
#    rerun sections 4 and 5. Where does its class token look in "the film was
#    never dull"? *Hint:* the permutation row is `n/a` for it: why?
# 3. **Where does the weight go on negated cues?** For every test sentence whose rationale
#    has a negator, find the most-attended token and count how often it is the negator, the
#    cue, or another word (and which). Is *was* an accident of one sentence? *Hint:*
#    `example.rationale` holds word positions; `clf.predict` returns one `(token, weight)`
#    pair per word on this data. Then retrain with `train.seed=1`: does the weight stay on the
#    same words?
# 4. **TF-IDF's mistake.** Which words of the test set does TF-IDF + logistic regression get
#    wrong most often? *Hint:* group the misclassified test sentences by whether they contain
#    *not* or *never* before a cue.
# 5. **A better alignment baseline.** Score the RWTH gold with "identity" links (English word
#    $j$ to German word $j$, when it exists) and compare with the diagonal's 74.5%. *Hint:*
#    build the sets of `(German, English)` pairs and pass them to `alignment_error_rate`.
