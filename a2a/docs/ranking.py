"""BM25 ranking of catalog sections (the search index's BM25, a fixed tokenizer), ties stable."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import numpy as np

from a2a.docs.catalog import Section
from a2a.index.bm25 import BM25Index

_WORD: Final = re.compile(r"[a-z0-9]+")
#: Common English words that carry no topic; dropped from documents and queries alike.
STOPWORDS: Final = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    }
)


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric runs, stopwords dropped, a plural `s` cut ("limits" -> "limit").

    Pure and fixed, so the same text always gives the same tokens (no model, no locale).
    """
    tokens = []
    for word in _WORD.findall(text.lower()):
        if word in STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        tokens.append(word)
    return tokens


class SectionIndex:
    """BM25 (Lucene variant, k1=1.5, b=0.75) over each section's heading and content.

    The same BM25 as the decisions' keyword search (a2a.index.bm25); only the tokenizer
    differs (the catalog's is fixed and model-free).
    """

    def __init__(self, sections: Sequence[Section]) -> None:
        self._sections = list(sections)
        self._bm25 = BM25Index()
        self._bm25.add([tokenize(f"{s.heading}\n{s.heading}\n{s.content}") for s in self._sections])
        self._every = np.ones(len(self._sections), dtype=bool)

    def search(self, query: str, limit: int) -> list[Section]:
        """At most `limit` sections with a positive score, best first.

        Ties (equal scores) are ordered by doc_id, then by the section's place in the catalog,
        so the same catalog and query always give the same list (seed 003: deterministic).
        """
        tokens = tokenize(query)
        if not self._sections or not tokens:
            return []
        rows, scores = self._bm25.scores(tokens, self._every, self._every)
        scored = [
            (float(score), self._sections[row])
            for row, score in zip(rows.tolist(), scores.tolist(), strict=True)
            if score > 0
        ]
        scored.sort(key=lambda item: (-item[0], item[1].doc_id, item[1].order))
        return [section for _, section in scored[:limit]]
