"""The embedding-function interface the store and the query service depend on."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns text into unit-length vectors; cosine distance between them is meaningful.

    `name` is recorded in the Chroma collection so that a store built with one model is
    never queried with another.
    """

    name: str

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, each `dimension` floats, L2-normalised."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The vector of one query text."""
        ...


def is_static(embedder: Embedder) -> bool:
    """Whether `embedder` declares `static = True`: a query's vector is a table lookup and a
    mean (~0.1 ms, WordLlama), cheap enough to compute on an event loop. Models that run a
    network (MiniLM: ~2-3 ms) leave it unset."""
    return getattr(embedder, "static", False) is True


def is_batchable(embedder: Embedder) -> bool:
    """Whether `embedder` has `query_groups(texts)`, which yields (positions in `texts`,
    float32 vectors of shape (n, dimension)) groups whose rows are, bit for bit, what
    `embed_query` gives each text alone (MiniLM int8; tests/embeddings assert it), or what
    a provider gives each input of a request (a2a.embeddings.provider), so concurrent
    queries may share one model call (a2a.embeddings.batching)."""
    return callable(getattr(embedder, "query_groups", None))


def is_available(embedder: Embedder) -> bool:
    """False while `embedder` (a provider) is taken as down: a caller that can do without
    a new vector (a keyword query, which only shows distances with it) skips it rather
    than wait. Models in this process are always available."""
    available = getattr(embedder, "available", None)
    return not callable(available) or bool(available())


def available_cores() -> int:
    """The cores this process may run on (all of them where the OS cannot say)."""
    if hasattr(os, "sched_getaffinity"):  # Linux
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
