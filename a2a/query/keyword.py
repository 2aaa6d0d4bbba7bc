"""A keyword (BM25) match as the ranking and fusion code sees it.

The BM25 index itself lives in the search index (a2a.index.bm25), shared with every mode.
"""

from __future__ import annotations

from typing import NamedTuple


class KeywordHit(NamedTuple):
    """A BM25 match: record id and its BM25 score (> 0, higher is better)."""

    id: str
    score: float
