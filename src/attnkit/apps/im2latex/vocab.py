"""The markup vocabulary: token <-> id, PAD 0, BOS 1, EOS 2, UNK 3, then the tokens seen in
training, most frequent first (ties alphabetical), as im2markup builds its target vocabulary."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]


class Vocabulary:
    """Token <-> id for normalised LaTeX token sequences."""

    def __init__(self, tokens: Sequence[str]):
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}

    @classmethod
    def build(cls, formulas: Iterable[Sequence[str]], min_count: int = 1) -> Vocabulary:
        """The specials, then every token seen at least ``min_count`` times."""
        counts = Counter(t for f in formulas for t in f)
        kept = sorted(
            (t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t)
        )
        return cls([*SPECIALS, *kept])

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """BOS, the tokens' ids (UNK for unseen ones), EOS."""
        return [BOS, *(self.index.get(t, UNK) for t in tokens), EOS]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens up to (without) the first EOS; PAD and BOS dropped, UNK kept as ``<unk>``."""
        out = []
        for i in map(int, ids):
            if i == EOS:
                break
            if i not in (PAD, BOS):
                out.append(self.tokens[i])
        return out

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"tokens": self.tokens}, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Vocabulary:
        if not Path(path).is_file():
            raise FileNotFoundError(f"{path}: missing vocabulary (vocab.json of the run)")
        return cls(json.loads(Path(path).read_text(encoding="utf-8"))["tokens"])
