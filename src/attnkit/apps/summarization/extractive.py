"""One-sentence extractive baselines on SciTLDR: Lead-1 and the oracle sentence (the "Lead" and
"Oracle" rows of Cachola et al. 2020's results table; the lead-3 baseline of See et al. 2017,
Table 1, cut to the one sentence a TLDR is).

- :func:`lead_1`: the abstract's first sentence. Reads nothing but the source.
- :func:`oracle`: the abstract sentence with the highest mean of ROUGE-1, -2 and -L F1
  against the paper's own TLDRs (:func:`attnkit.metrics.summary.rouge`, SciTLDR's
  multi-reference rule), the earliest on a tie. **It reads the references**, so it is no
  summarizer but an upper bound for picking one sentence of the abstract.

SciTLDR's oracle script (allenai/scitldr ``scripts/get_oracle_sents.py``) takes the sentence
with the highest ROUGE-1 F1 (py-rouge) against any one target and skips sentences under 5
characters; the files' ``source_labels`` mark the highest of their ``rouge_scores``
(per-sentence ROUGE-1), which on dev sit closer to ROUGE-1 against the *first* target,
unstemmed, than to the maximum over targets. With another ROUGE package and criterion this
oracle agrees with ``source_labels`` on about 63% of the dev papers
(``test_summarization_extractive.py`` measures it).
"""

from __future__ import annotations

from attnkit.apps.summarization.data import Paper
from attnkit.metrics.summary import rouge


def lead_1(paper: Paper) -> str:
    """The first non-blank sentence of the abstract, stripped."""
    return next(sentence.strip() for sentence in paper.source if sentence.strip())


def oracle_scores(paper: Paper) -> list[float]:
    """Each source sentence's mean of ROUGE-1/2/L F1 (points) against the paper's targets
    (SciTLDR's rule: the reference with the best ROUGE-1); a blank sentence scores -1."""
    scores = []
    for sentence in paper.source:
        if not sentence.strip():
            scores.append(-1.0)
            continue
        found = rouge(sentence, paper.targets)
        scores.append(sum(found.values()) / len(found))
    return scores


def oracle_index(paper: Paper) -> int:
    """The index in ``paper.source`` of the oracle sentence: the highest
    :func:`oracle_scores`, the earliest on a tie."""
    scores = oracle_scores(paper)
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


def oracle(paper: Paper) -> str:
    """The oracle sentence (module docstring; reads the references: an upper bound for
    one-sentence extraction, not a summarizer), stripped."""
    return paper.source[oracle_index(paper)].strip()


METHODS = {"lead-1": lead_1, "oracle": oracle}
