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


def embedder_of(settings: Settings, recorded: Callable[[], str | None] | None = None) -> Embedder:
    """The embedding model the settings configure: the bundled CSTP_EMBEDDING_MODEL, or
    the provider's (CSTP_EMBEDDING_PROVIDER=openai), its dimension known: set by
    CSTP_EMBEDDING_DIMENSIONS, else the one `recorded()` (the identity the collection
    records, when it names this provider's model) says, else asked of the provider now.

    Raises EmbeddingModelError when the model cannot load or the provider cannot say its
    dimension.
    """
    if settings.embedding_provider == "bundled":
        return load_embedder(settings.embedding_model)
    from a2a.embeddings.provider import ProviderEmbedder

    assert settings.embedding_url is not None  # Settings requires it for a provider
    known = None
    if settings.embedding_dimensions is None and recorded is not None:
        known = recorded_dimension(recorded(), settings.embedding_model)
    return ProviderEmbedder.open(
        str(settings.embedding_url),
        settings.embedding_model,
        api_key=settings.embedding_api_key,
        dimensions=settings.embedding_dimensions,
        batch=settings.embedding_batch,
        timeout_seconds=settings.chroma_timeout_seconds,
        known_dimension=known,
    )


def recorded_dimension(identity: str | None, model: str) -> int | None:
    """The dimensions of `identity` (`openai:<model>:<dimensions>`, as a collection records
    a provider's model) when it names `model`, else None."""
    prefix, _, dimensions = (identity or "").rpartition(":")
    if prefix != f"openai:{model}" or not dimensions.isdigit():
        return None
    return int(dimensions) or None


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
