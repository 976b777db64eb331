"""The explorer's limits: the server's own (:class:`attnkit.server.limits.Limits`: characters,
body, digits, time, connections, weights in one answer) and what a translation may ask for.

A request beyond a limit is refused with a JSON 400 whose message starts with the field at
fault, e.g. ``"beam: at most 16, got 17"``. What multiplies the size of an answer, and the
limit on each:

========================  =====================================================================
``text``                  ``max_chars`` characters (500): the source length ``S`` in pieces
``beam``                  ``max_beam`` (16), and ``beam`` × the weights one hypothesis records
                          during the search at most ``max_search_weights`` (4,000,000, 16 MB
                          of float32): a long text gets a smaller largest beam
``n_best``                ``max_n_best`` hypotheses returned (4), each with its attention
``layers``, ``heads``     a subset of the model's own (default: all); nothing beyond them
the answer's attention    at most ``max_weights`` weights in all (500,000; about 9 bytes each
                          in the JSON, so an answer is at most about 5 MB), the best
                          hypothesis counted twice (it is also the top level). Without an
                          explicit ``n_best``, as many hypotheses are returned as fit; with
                          one, or when even the best hypothesis does not fit, the request is
                          refused
========================  =====================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from attnkit.server.limits import Limits, RequestError, shown

__all__ = ["LIMITS", "ExplorerLimits", "RequestError", "shown"]


@dataclass(frozen=True)
class ExplorerLimits(Limits):
    """The server's limits and a translation's (see the module docstring)."""

    max_beam: int = 16  # "beam": 1 (greedy) to this
    max_n_best: int = 4  # "n_best": hypotheses returned, each with its attention and steps
    max_search_weights: int = 4_000_000  # beam x weights one hypothesis records in the search


LIMITS = ExplorerLimits()
