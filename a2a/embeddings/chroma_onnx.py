"""Chroma's own default embedding function, for users who want exactly Chroma's vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from a2a.errors import EmbeddingModelError


class ChromaOnnxEmbedder:
    """Chroma's ONNX all-MiniLM-L6-v2 (384-dim). Downloads its model on first use: needs network.

    Raises EmbeddingModelError when the model cannot be fetched or loaded.
    """

    name = "chroma-onnx-all-minilm-l6-v2"
    dimension = 384

    def __init__(self) -> None:
        # The one place outside a2a.store that imports chromadb: this *is* Chroma's model.
        from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

        self._function: Any = DefaultEmbeddingFunction()
        try:
            self._function(["warm-up"])
        except Exception as exc:
            raise EmbeddingModelError(f"Chroma's ONNX model could not be loaded: {exc}") from exc

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._function(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
