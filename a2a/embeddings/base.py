"""The embedding-function interface the store and the query service depend on."""

from __future__ import annotations

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


class EmbeddingModelError(RuntimeError):
    """The configured embedding model cannot be loaded (not installed, no network, bad file)."""
