"""The product of two directions' attention (Liang, Taskar & Klein 2006) and its links."""

from __future__ import annotations

import pytest
import torch

from attnkit.interpret.agreement import agreement_links, posterior_product
from attnkit.interpret.alignments import argmax_links, flip, symmetrise

# "der Hund schläft" <- "the dog sleeps": source words (English) 0-2, target words (German) 0-2.
# The forward run's article leans on the noun that decides its case (0.6 on "dog"); the reverse
# run's "the" reads "der" (0.8). Each direction is right about the other words.
FORWARD = torch.tensor([[0.4, 0.6, 0.0], [0.1, 0.8, 0.1], [0.0, 0.1, 0.9]])  # (T=3, S=3)
BACKWARD = torch.tensor([[0.8, 0.2, 0.0], [0.2, 0.7, 0.1], [0.0, 0.1, 0.9]])  # (S=3, T=3)


def test_the_product_is_the_two_weights_multiplied_link_by_link():
    product = posterior_product(FORWARD, BACKWARD)
    # P_ij = A->_ij * A<-_ji, by hand for three cells
    assert product[0, 0].item() == pytest.approx(0.4 * 0.8)
    assert product[0, 1].item() == pytest.approx(0.6 * 0.2)
    assert product[2, 1].item() == pytest.approx(0.1 * 0.1)
    assert product.shape == (3, 3) and product.dtype == torch.float64


def test_links_are_where_both_directions_agree():
    # the forward argmax alone links "der" (target 0) to "dog" (source 1) ...
    assert (1, 0) in argmax_links(FORWARD)
    # ... and grow-diag of the two directions' argmax links keeps that link ...
    linked = symmetrise(argmax_links(FORWARD), flip(argmax_links(BACKWARD)), "grow-diag")
    assert (1, 0) in linked
    # ... while the product (0.32 against 0.12) links "der" to "the" only
    assert agreement_links(FORWARD, BACKWARD) == {(0, 0), (1, 1), (2, 2)}


def test_a_word_pair_two_to_one_keeps_both_links():
    # "twenty one" -> "einundzwanzig": one target word, two source words; both directions agree
    forward = torch.tensor([[0.5, 0.5]])  # (T=1, S=2)
    backward = torch.tensor([[1.0], [1.0]])  # (S=2, T=1)
    assert agreement_links(forward, backward) == {(0, 0), (1, 0)}


def test_shapes_must_match_word_for_word():
    with pytest.raises(ValueError, match=r"must match, got \(3, 3\) and \(2, 3\)"):
        posterior_product(FORWARD, BACKWARD[:2])
    with pytest.raises(ValueError, match="must match"):
        posterior_product(FORWARD[0], BACKWARD)
