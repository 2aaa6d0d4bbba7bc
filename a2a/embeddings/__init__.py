"""Embedding models by name: the offline default, a lighter one, and Chroma's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from a2a.embeddings.base import Embedder, is_batchable, is_static
from a2a.errors import EmbeddingModelError
from a2a.settings import DEFAULT_MODEL, EMBEDDING_MODELS


def _minilm() -> Embedder:
    from a2a.embeddings.minilm_onnx import MiniLMOnnxEmbedder

    return MiniLMOnnxEmbedder()


def _wordllama() -> Embedder:
    from a2a.embeddings.wordllama import WordLlamaEmbedder

    return WordLlamaEmbedder()


def _chroma() -> Embedder:
    from a2a.embeddings.chroma_onnx import ChromaOnnxEmbedder

    return ChromaOnnxEmbedder()


#: Model name -> loader, for each name `embedding_model` in the settings accepts
#: (a2a.settings.EMBEDDING_MODELS, in that order).
MODELS: Final[dict[str, Callable[[], Embedder]]] = dict(
    zip(EMBEDDING_MODELS, (_minilm, _wordllama, _chroma), strict=True)
)


def load_embedder(name: str) -> Embedder:
    """The embedding model called `name` (a key of MODELS).

    Raises EmbeddingModelError for an unknown name or a model that cannot load.
    """
    try:
        loader = MODELS[name]
    except KeyError:
        raise EmbeddingModelError(
            f"unknown embedding model {name!r}; choose one of {sorted(MODELS)}"
        ) from None
    return loader()


__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "Embedder",
    "is_batchable",
    "is_static",
    "load_embedder",
]
