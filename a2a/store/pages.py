"""What a store read returns: one record (`StoredRecord`) or one page of a whole-store read
(`StoredPage`), in our types; Chroma's shapes stay in a2a.store.chroma."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from a2a.store.metadata import decode
from a2a.store.stored import StoredDecision

#: Rows per whole-store read: far below SQLite's 32,766 bound variables per statement
#: (Chroma binds one per id and per metadata key read), and a few MB of embeddings.
PAGE_SIZE = 5000


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A stored record: id, its fields (decoded from Chroma's metadata), and its embedded
    text when asked for."""

    id: str
    decision: StoredDecision
    document: str | None = None


@dataclass(frozen=True, slots=True)
class StoredPage:
    """One page of a whole-store read: ids, metadata, text and float32 embeddings (n x dim).

    `documents` and `embeddings` are None when not asked for.
    """

    ids: list[str]
    metadatas: list[dict[str, Any]]
    documents: list[str] | None
    embeddings: npt.NDArray[np.float32] | None
    #: `metadatas` decoded already (when the text was rebuilt from them), else None.
    decoded: list[StoredDecision] | None = None

    def decisions(self) -> list[StoredDecision]:
        """The page's records, typed (decoded from `metadatas`), in page order."""
        if self.decoded is not None:
            return self.decoded
        return [decode(i, m) for i, m in zip(self.ids, self.metadatas, strict=True)]
