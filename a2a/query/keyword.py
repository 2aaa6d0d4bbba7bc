"""BM25 keyword search over the stored decisions' text, with bm25s, kept in step with Chroma."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import bm25s
import numpy as np
import Stemmer

from a2a.store import AsyncStore, StoredRecord

_STEMMER = Stemmer.Stemmer("english")


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased word tokens, English stop words removed, Snowball-stemmed."""
    tokenized = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False
    )
    return [list(tokens) for tokens in tokenized]


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """A BM25 match: record id and its BM25 score (> 0, higher is better)."""

    id: str
    score: float


class KeywordIndex:
    """An in-memory BM25 index of one revision of the store (Lucene's BM25 variant).

    Built from every record's embedded text; `revision` names the store revision it
    reflects, so the owner can rebuild it when the store has changed.
    """

    def __init__(self, records: Sequence[StoredRecord], revision: str | None) -> None:
        self.revision = revision
        self._ids = [r.id for r in records]
        self._position = {record_id: i for i, record_id in enumerate(self._ids)}
        self._model: bm25s.BM25 | None = None
        if records:
            self._model = bm25s.BM25()
            self._model.index(tokenize([r.document or "" for r in records]), show_progress=False)
        # bm25s keeps per-call state while scoring; one query at a time per index.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    def search(self, query: str, k: int, allowed: set[str] | None = None) -> list[KeywordHit]:
        """Top `k` records by BM25 score among `allowed` ids (all when None), ties by id.

        Records scoring 0 (no query term in them) are left out.
        """
        if self._model is None or k < 1:
            return []
        (tokens,) = tokenize([query])
        if not tokens:  # only stop words: nothing to match
            return []
        with self._lock:
            scores = np.asarray(self._model.get_scores(tokens), dtype=np.float64)
        if allowed is not None:
            mask = np.zeros(len(self._ids), dtype=bool)
            mask[[self._position[i] for i in allowed if i in self._position]] = True
            scores = np.where(mask, scores, 0.0)
        candidates = np.flatnonzero(scores > 0)
        ranked = sorted(candidates, key=lambda i: (-round(float(scores[i]), 6), self._ids[i]))
        return [KeywordHit(self._ids[i], round(float(scores[i]), 6)) for i in ranked[:k]]


class KeywordSearch:
    """The keyword index of one store, rebuilt whenever the store's revision changes.

    The revision is read from Chroma on every search, so records written by `cstp index`
    in another process are searchable at the next query: the index never goes stale.
    """

    def __init__(self, store: AsyncStore) -> None:
        self._store = store
        self._index: KeywordIndex | None = None
        self._rebuild = asyncio.Lock()

    async def search(
        self, query: str, k: int, where: dict[str, Any] | None = None
    ) -> list[KeywordHit]:
        """Top `k` BM25 matches among records passing `where` (the Chroma clause itself).

        Raises StoreUnavailable when Chroma cannot answer.
        """
        index = await self._current()
        allowed = None
        if where is not None:
            rows = await self._store.get(where=where, metadata=False)
            allowed = {row.id for row in rows}
        return await anyio.to_thread.run_sync(index.search, query, k, allowed)

    async def _current(self) -> KeywordIndex:
        revision = await self._store.revision()
        if self._index is not None and self._index.revision == revision:
            return self._index
        async with self._rebuild:
            if self._index is None or self._index.revision != revision:
                records = await self._store.get(documents=True)
                self._index = await anyio.to_thread.run_sync(KeywordIndex, records, revision)
            return self._index
