"""What a store read returns: one record (`StoredRecord`) or one page of a whole-store read
(`StoredPage`), in our types; Chroma's shapes stay in a2a.store.chroma."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from a2a.records import DecisionRecord
from a2a.store.metadata import decode, updated_at

#: Rows per whole-store read: far below SQLite's 32,766 bound variables per statement
#: (Chroma binds one per id and per metadata key read), and a few MB of embeddings.
PAGE_SIZE = 5000


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A stored record: its id, the record (`origin_hash`: the stored content hash), its
    embedded text when asked for, when it was last written (epoch ms, the writer's clock;
    None before the store stamped writes), and `whole`: False for a record stored before
    records were kept whole, rebuilt from its flat keys (a2a.store.metadata.decode)."""

    id: str
    decision: DecisionRecord
    document: str | None = None
    updated_at: int | None = None
    whole: bool = True

    @classmethod
    def of(
        cls, record_id: str, metadata: Mapping[str, Any], document: str | None = None
    ) -> StoredRecord:
        """The record `metadata` keeps under `record_id`."""
        record, whole = decode(record_id, metadata)
        return cls(record_id, record, document, updated_at(metadata), whole)


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
    decoded: list[StoredRecord] | None = None

    def rows(self) -> list[StoredRecord]:
        """The page's records, decoded from `metadatas`, in page order (without texts)."""
        if self.decoded is not None:
            return self.decoded
        return [StoredRecord.of(i, m) for i, m in zip(self.ids, self.metadatas, strict=True)]
