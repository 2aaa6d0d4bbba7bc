"""The DecisionService a running service uses, built from its settings."""

from __future__ import annotations

import hashlib

from a2a.decisions.cursor import CursorCodec
from a2a.decisions.service import DecisionService
from a2a.decisions.table import StoreTable
from a2a.embeddings import Embedder
from a2a.settings import Settings
from a2a.store import AsyncStore


def decision_service(settings: Settings, store: AsyncStore, embedder: Embedder) -> DecisionService:
    """Decisions on `store`, embedded with `embedder`, blocking work in the store's worker
    pool (a Chroma server call is bounded by the client's own timeout).

    Cursors are signed with CSTP_CURSOR_SECRET when set, else with a per-process key.
    """
    secret = settings.cursor_secret
    key = None if secret is None else hashlib.sha256(secret.get_secret_value().encode()).digest()
    return DecisionService(
        store, embedder, StoreTable(store), cursors=CursorCodec(key), run=store.workers.run
    )
