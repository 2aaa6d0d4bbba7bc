"""WordLlama: static token embeddings, ~100x faster than MiniLM and a little less accurate."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from a2a.errors import EmbeddingModelError


class WordLlamaEmbedder:
    """256-dim WordLlama (l2_supercat) vectors, L2-normalised, loaded from its wheel offline.

    Keeps nothing per text it embeds (its tokenizer's BPE cache is off)."""

    name = "wordllama-l2-supercat-256"
    dimension = 256
    #: A query's vector is a lookup of its tokens' rows and their mean (a2a.embeddings.is_static).
    static = True

    def __init__(self) -> None:
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError as exc:
            raise EmbeddingModelError("package wordllama is not installed") from exc
        package_dir = Path(wordllama.__path__[0])
        # disable_download: the weights ship in the wheel; never reach for a hub.
        self._model = WordLlama.load(
            dim=self.dimension, cache_dir=package_dir, disable_download=True
        )
        # The tokenizer (Llama's BPE, no pre-tokenizer) takes a whole text under 256 bytes as
        # one "word", and its BPE cache kept every such text with its tokens: ~2-7 KiB for
        # each new query text, up to 10,000 of them (~20 MiB of a replica's RSS; issue 44,
        # item 6). It saves nothing measurable (~36 us a query with or without it). Capacity
        # 0 turns it off: tokenizers' own knob (huggingface/tokenizers#1675, #1680).
        self._model.tokenizer.model._resize_cache(0)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.embed(list(texts), norm=True)
        return [row.tolist() for row in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
