"""Interaction files, the SASRec split, and the candidates each evaluated user is ranked on.

**Files** (:func:`read_interactions`): one interaction a line, ``user item`` or ``user item
timestamp``, the fields separated by spaces or tabs, or by commas (a CSV: chosen when the first
non-blank line holds a comma); the first line may be a header (when none of its fields is a
number); blank lines are skipped. Ids are whole numbers from 1 (0 is the model's padding) and
are kept as they are, so ``n_items`` is the largest item id, as in the authors' code; the
timestamp is any finite number. With a timestamp each user's items are sorted by it (stable:
equal times keep file order); without, the file order is the time order (SASRec's
``Video.txt``, the paper's Amazon "Games", is written so). Every error is a
:class:`~attnkit.errors.DataError` naming the file and the line: an id that is not a whole
number >= 1, a bad timestamp, a line with another number of columns than the first, a file
with no interactions.

**Split** (:func:`split_last_two`): the authors' ``data_partition`` (kang205/SASRec
``util.py``): a user with at least 3 interactions gives the last item as the test target, the
one before as the validation target and the rest to training; a user with fewer than 3 (one
or two items) goes wholly to training and is never evaluated. (pmixer/SASRec.pytorch later
moved the cut to 4; this follows the paper's code.)

**Sampled candidates** (:func:`candidates`): the target first, then 100 negatives drawn
uniformly (Kang & McAuley 2018, Sec. IV-B). ``rule="unseen"`` (default) draws 100 distinct
items the user never interacted with, the validation and test items included, so a negative
is never a positive. ``rule="authors"`` is the authors' exact draw: each negative on its own,
with replacement, rejecting only the *training* items (``rated = set(train[u])``), so a
negative may repeat or be the validation or even the test item. Both are a pure function of
``(seed, user)`` (NumPy's generator seeded with ``[seed, user]``), the same for the
validation and the test target; the authors drew from one global stream instead.
:func:`evaluation_users` samples the paper's 10,000 users, and :func:`exclusions` lists what
full ranking leaves out (the history before the target).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from attnkit.datadir import default_data_dir
from attnkit.errors import DataError
from attnkit.textfiles import read_text, where

GAMES = Path("sasrec") / "Video.txt"  # under the shared data folder; see its SOURCE.md
NEGATIVES = 100  # the paper's sampled negatives per target
EVALUATED_USERS = 10_000  # the paper evaluates a random 10,000 users when there are more
RULES = ("unseen", "authors")
TARGETS = ("valid", "test")
_ID = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


@dataclass
class Interactions:
    """Each user's items in time order, read from ``path``."""

    path: Path
    sequences: dict[int, list[int]]  # user id -> item ids, oldest first
    n_users: int  # the largest user id
    n_items: int  # the largest item id
    lines: int  # interactions read


@dataclass
class Split:
    """The leave-last-two-out split (module docstring); ids as in the file."""

    train: dict[int, list[int]]  # every user -> training items, oldest first
    valid: dict[int, int]  # evaluated user -> validation target
    test: dict[int, int]  # evaluated user -> test target
    n_users: int
    n_items: int
    training_only: list[int] = field(default_factory=list)  # users with < 3 items

    def evaluated(self) -> list[int]:
        """The users with a validation and a test target, in increasing id."""
        return sorted(self.test)

    def target(self, user: int, target: Literal["valid", "test"] = "test") -> int:
        """The item ``user`` is evaluated on; a KeyError for a user who is not evaluated."""
        if target not in TARGETS:
            raise ValueError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
        if user not in self.test:
            raise KeyError(f"user {user} has fewer than 3 interactions and is not evaluated")
        return self.test[user] if target == "test" else self.valid[user]

    def history(self, user: int, target: Literal["valid", "test"] = "test") -> list[int]:
        """What the model sees before ``target``: the training items, and for the test target
        the validation item after them."""
        self.target(user, target)
        return [*self.train[user], *([self.valid[user]] if target == "test" else [])]


def _fields(text: str, comma: bool) -> list[str]:
    return [f.strip() for f in text.split(",")] if comma else text.split()


def _id(value: str, what: str, at: str) -> int:
    if not _ID.fullmatch(value) or int(value) == 0:
        raise DataError(
            f"{at}: {what} id {value!r} is not a whole number >= 1 (ids start at 1; 0 is padding)"
        )
    return int(value)


def _time(value: str, at: str) -> float:
    if not _NUMBER.fullmatch(value) or not math.isfinite(float(value)):
        raise DataError(f"{at}: timestamp {value!r} is not a number")
    return float(value)


def _rows(text: str, path: Path) -> list[tuple[int, int, float]]:
    """``(user, item, time)`` per data line; ``time`` is the line number when the file
    has no timestamps, so sorting by it keeps the file order."""
    lines = text.split("\n")
    first = next((n for n, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise DataError(f"{path}: an empty file, expected `user item [timestamp]` lines")
    comma = "," in lines[first]
    header = not any(_NUMBER.fullmatch(f) for f in _fields(lines[first], comma))
    rows, columns = [], None
    for number, line in enumerate(lines[first + header :], start=first + header + 1):
        parts = _fields(line, comma)
        if not line.strip():
            continue
        at = where(path, number)
        columns = columns or (len(parts), number)
        if len(parts) not in (2, 3) or len(parts) != columns[0]:
            expected = f"as line {columns[1]}" if len(parts) in (2, 3) else "2 or 3"
            raise DataError(
                f"{at}: {len(parts)} columns, expected {expected} (user item [timestamp])"
            )
        when = _time(parts[2], at) if len(parts) == 3 else float(number)
        rows.append((_id(parts[0], "user", at), _id(parts[1], "item", at), when))
    if not rows:
        raise DataError(f"{path}: only a header line, no interactions")
    return rows


def read_interactions(path: str | Path) -> Interactions:
    """Each user's items from a ``user item [timestamp]`` file (module docstring)."""
    path = Path(path)
    rows = _rows(read_text(path), path)
    timed: dict[int, list[tuple[float, int]]] = {}
    for user, item, when in rows:
        timed.setdefault(user, []).append((when, item))
    sequences = {
        user: [item for _, item in sorted(pairs, key=lambda pair: pair[0])]  # stable
        for user, pairs in sorted(timed.items())
    }
    n_items = max(item for _, item, _ in rows)
    return Interactions(path, sequences, max(sequences), n_items, len(rows))


def games_path(data_dir: str | Path | None = None) -> Path:
    """SASRec's ``Video.txt`` (Amazon Games) in the shared data folder."""
    return Path(data_dir if data_dir is not None else default_data_dir()) / GAMES


def split_last_two(interactions: Interactions) -> Split:
    """The authors' ``data_partition`` (module docstring): per user with >= 3 items, the last
    is the test target and the one before the validation target; others train only."""
    split = Split({}, {}, {}, interactions.n_users, interactions.n_items)
    for user, items in interactions.sequences.items():
        if len(items) < 3:
            split.train[user] = list(items)
            split.training_only.append(user)
            continue
        split.train[user] = items[:-2]
        split.valid[user], split.test[user] = items[-2], items[-1]
    return split


def _check(rule: str, seed: int) -> None:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, not {rule!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")


def _draw(rng: np.random.Generator, n_items: int, banned: set[int], n: int, distinct: bool):
    """``n`` items of ``1..n_items`` not in ``banned``, uniformly, by rejection in draw order;
    ``distinct``: without replacement."""
    out: list[int] = []
    taken = set(banned)
    while len(out) < n:
        for t in rng.integers(1, n_items + 1, size=2 * n).tolist():
            if t not in taken:
                out.append(t)
                if distinct:
                    taken.add(t)
                if len(out) == n:
                    break
    return np.asarray(out, dtype=np.int64)  # (n,)


def sample_negatives(
    split: Split,
    user: int,
    seed: int = 0,
    n: int = NEGATIVES,
    rule: Literal["unseen", "authors"] = "unseen",
) -> np.ndarray:
    """``n`` negatives ``(n,)`` for an evaluated ``user``, a pure function of ``(seed, user)``
    (module docstring for ``rule``). Too few unseen items for ``n`` is a ValueError."""
    _check(rule, seed)
    history = [*split.history(user, "test"), split.target(user, "test")]
    banned = set(history if rule == "unseen" else split.train[user])
    free = split.n_items - len({i for i in banned if 1 <= i <= split.n_items})
    if free < (n if rule == "unseen" else 1):
        raise ValueError(
            f"user {user}: {free} items left to sample {n} negatives from ({split.n_items} items)"
        )
    rng = np.random.default_rng([seed, user])
    if rule == "unseen" and free < split.n_items // 2:  # rejection would be slow
        allowed = np.setdiff1d(np.arange(1, split.n_items + 1), np.fromiter(banned, np.int64))
        return rng.choice(allowed, size=n, replace=False).astype(np.int64)  # (n,)
    return _draw(rng, split.n_items, banned, n, distinct=rule == "unseen")


def candidates(
    split: Split,
    user: int,
    target: Literal["valid", "test"] = "test",
    seed: int = 0,
    n: int = NEGATIVES,
    rule: Literal["unseen", "authors"] = "unseen",
) -> np.ndarray:
    """The items ``(1 + n,)`` ``user`` is ranked on: the target at index 0, then
    :func:`sample_negatives`; score them and take ``rank_of_target(scores, 0)``."""
    truth = split.target(user, target)
    return np.concatenate([[truth], sample_negatives(split, user, seed, n, rule)])  # (1 + n,)


def exclusions(split: Split, user: int, target: Literal["valid", "test"] = "test") -> list[int]:
    """Items full ranking leaves out for ``user``: the history before ``target``
    (:meth:`Split.history`), without the target itself should it repeat an earlier item."""
    return sorted(set(split.history(user, target)) - {split.target(user, target)})


def evaluation_users(split: Split, limit: int | None = EVALUATED_USERS, seed: int = 0) -> list[int]:
    """The evaluated users (increasing id), or ``limit`` of them drawn uniformly without
    replacement (seeded) when there are more. The authors drew 10,000 of *all* user ids and
    then skipped those without a test target, so slightly fewer were scored."""
    users = split.evaluated()
    if limit is None or len(users) <= limit:
        return users
    chosen = np.random.default_rng(seed).choice(len(users), size=limit, replace=False)
    return sorted(users[i] for i in chosen.tolist())
