"""Field weights of keyword search: a weighted field's terms counted `weight` times."""

from __future__ import annotations

import pytest

from a2a.index.fields import UNWEIGHTED, FieldWeights, weighted_terms
from a2a.index.tokens import analyze

DOCUMENT = "Use Postgres\n\nWe need a database.\n\nTags: storage"


def test_unweighted_terms_are_the_documents() -> None:
    assert weighted_terms(DOCUMENT, "Use Postgres", ["storage"], UNWEIGHTED) == analyze(DOCUMENT)


def test_a_title_weight_of_three_counts_its_terms_three_times() -> None:
    terms = weighted_terms(DOCUMENT, "Use Postgres", ["storage"], FieldWeights(title=3))
    assert terms.count("postgr") == 3
    assert terms.count("databas") == 1


def test_a_tag_weight_repeats_the_tags() -> None:
    terms = weighted_terms(DOCUMENT, None, ["storage"], FieldWeights(tags=2))
    assert terms.count("storag") == 2


@pytest.mark.parametrize("weights", [{"title": 0}, {"tags": -1}], ids=["title-0", "tags-neg"])
def test_weights_below_one_are_refused(weights: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        FieldWeights(**weights)
