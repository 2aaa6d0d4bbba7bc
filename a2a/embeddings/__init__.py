"""Embedding models by name (the offline default, a lighter one, Chroma's own) or from an
embedding provider (a2a.embeddings.provider)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from a2a.embeddings.base import Embedder, is_available, is_batchable, is_static
from a2a.errors import EmbeddingModelError
from a2a.settings import DEFAULT_MODEL, EMBEDDING_MODELS, Settings


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


def embedder_of(settings: Settings) -> Embedder:
    """The embedding model the settings configure: the bundled CSTP_EMBEDDING_MODEL, or
    the provider's (CSTP_EMBEDDING_PROVIDER=openai), its dimension known (asked of it now
    unless CSTP_EMBEDDING_DIMENSIONS is set).

    Raises EmbeddingModelError when the model cannot load or the provider cannot say its
    dimension.
    """
    if settings.embedding_provider == "bundled":
        return load_embedder(settings.embedding_model)
    from a2a.embeddings.provider import ProviderEmbedder

    assert settings.embedding_url is not None  # Settings requires it for a provider
    return ProviderEmbedder.open(
        str(settings.embedding_url),
        settings.embedding_model,
        api_key=settings.embedding_api_key,
        dimensions=settings.embedding_dimensions,
        batch=settings.embedding_batch,
        timeout_seconds=settings.chroma_timeout_seconds,
    )


__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "Embedder",
    "embedder_of",
    "is_available",
    "is_batchable",
    "is_static",
    "load_embedder",
]
