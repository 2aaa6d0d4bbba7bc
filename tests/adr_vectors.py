"""The default model's vectors of the ADR corpus, embedded once and kept in the repository.

The ADR store template (`adr_store`, tests/conftest.py) is indexed with these vectors
instead of running the model over the 409 ADRs (1,317 windows, ~60 CPU seconds) in every
test run. Everything else about the template is the real index run: the same loader,
`Indexer` and embedded Chroma as `cstp index`. The vectors are the model's own output,
keyed by the SHA-256 of the text embedded; a text not in the file is embedded by the model.
tests/embeddings/test_adr_vectors.py checks that the file covers every ADR and that the
model still gives these vectors. After a change to the model, the windows or the corpus:

    .venv/bin/python -m tests.adr_vectors
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from a2a.embeddings import DEFAULT_MODEL, Embedder, load_embedder
from a2a.ingest.indexer import Indexer, IndexSummary

#: keys: the SHA-256 (hex) of each embedded text; vectors: float32, one row per key.
VECTORS_FILE = Path(__file__).parent / "data" / "adr-vectors.npz"


def text_key(text: str) -> str:
    """The key of `text` in VECTORS_FILE."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def corpus_texts(corpus: Path) -> list[str]:
    """The text `cstp index` embeds for each record of `corpus`, in file order."""
    summary = IndexSummary()
    return [record.embedding_text() for record in Indexer.load([corpus], summary)]


def load_vectors() -> dict[str, npt.NDArray[np.float32]]:
    """Text key -> vector, from VECTORS_FILE (empty when there is none)."""
    if not VECTORS_FILE.exists():
        return {}
    with np.load(VECTORS_FILE) as saved:
        return dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))


class StoredVectors:
    """`model`, answering the documents whose vectors VECTORS_FILE holds from the file.

    `missed` counts the documents the model had to embed.
    """

    def __init__(self, model: Embedder) -> None:
        self.model = model
        self.name = model.name
        self.vectors = load_vectors()
        self.missed = 0

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [text_key(text) for text in texts]
        missing = [text for text, key in zip(texts, keys, strict=True) if key not in self.vectors]
        if missing:
            self.missed += len(missing)
            embedded = self.model.embed_documents(missing)
            self.vectors.update(
                (text_key(text), np.asarray(vector, dtype=np.float32))
                for text, vector in zip(missing, embedded, strict=True)
            )
        return [self.vectors[key].tolist() for key in keys]

    def embed_query(self, text: str) -> list[float]:
        return self.model.embed_query(text)


def main() -> None:
    """Embed the corpus with the default model and write VECTORS_FILE."""
    from tests.conftest import ADR_CORPUS, require_shared

    require_shared()
    texts = corpus_texts(ADR_CORPUS)
    vectors = np.asarray(load_embedder(DEFAULT_MODEL).embed_documents(texts), dtype=np.float32)
    keys = np.asarray([text_key(text) for text in texts])
    np.savez_compressed(VECTORS_FILE, keys=keys, vectors=vectors)
    print(f"{len(texts)} vectors of {DEFAULT_MODEL} written to {VECTORS_FILE}")


if __name__ == "__main__":
    main()
