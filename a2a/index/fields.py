"""Field weights of keyword search: a record's BM25 terms with its title and tags counted
more than once (BM25F with one length normalisation, by repeating the weighted fields).

BM25F (Robertson, Zaragoza and Taylor, "Simple BM25 extension to multiple weighted fields",
CIKM 2004) adds each field's term frequency times the field's weight *before* BM25's
saturation, and normalises by the weighted length. With one `b` shared by every field that
is exactly BM25 over a document in which each field's terms appear `weight` times, which
is what `weighted_terms` builds; the BM25 scoring (a2a.index.bm25) is unchanged. The indexed
text (`IndexedRecord.document`, the embedded text) already holds the title and the tags
once, so a weight of 1 adds nothing and `weighted_terms` with FieldWeights(1, 1) is
`analyze(document)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from a2a.index.tokens import analyze


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """How many times a field's terms count in keyword search (integers >= 1).

    Defaults: every field once (plain BM25). Title weights 2-4 were measured by repeated
    cross-validation over the two dev sets and did not raise the worst fold's MRR@10
    (docs/ranking.md; `python scripts/field_weights.py`), so none ships; the ADR corpus
    has no tags, so their weight is unmeasured and stays 1.
    """

    title: int = 1
    tags: int = 1

    def __post_init__(self) -> None:
        if self.title < 1 or self.tags < 1:
            raise ValueError("field weights are whole numbers >= 1")


#: The weights of a plain BM25 over the indexed text (every field once).
UNWEIGHTED = FieldWeights(1, 1)


def weighted_terms(
    document: str, title: str | None, tags: Sequence[str], weights: FieldWeights
) -> list[str]:
    """`analyze(document)`, then the title's terms `weights.title - 1` more times and the
    tags' `weights.tags - 1` more times (the document holds each once already)."""
    terms = analyze(document)
    if weights.title > 1 and title:
        terms += analyze(title) * (weights.title - 1)
    if weights.tags > 1 and tags:
        terms += analyze(" ".join(tags)) * (weights.tags - 1)
    return terms
