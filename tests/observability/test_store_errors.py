"""AsyncStore reports each failed Chroma call to its `on_error` hook, by kind."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from a2a.errors import StoreUnavailable
from a2a.store.async_store import AsyncStore


class FailingStore:
    def count(self) -> int:
        raise StoreUnavailable("Chroma at test failed: ConnectError")


class StalledStore:
    def __init__(self) -> None:
        self.release = threading.Event()

    def count(self) -> int:
        self.release.wait()
        return 0


async def test_a_failed_call_is_reported_as_failure() -> None:
    kinds: list[str] = []
    store: Any = FailingStore()
    with pytest.raises(StoreUnavailable):
        await AsyncStore(store, timeout_seconds=5, on_error=kinds.append).count()
    assert kinds == ["failure"]


async def test_a_call_past_its_deadline_is_reported_as_timeout() -> None:
    kinds: list[str] = []
    stalled = StalledStore()
    store: Any = stalled
    try:
        with pytest.raises(StoreUnavailable):
            await AsyncStore(store, timeout_seconds=0.01, on_error=kinds.append).count()
    finally:
        stalled.release.set()
    assert kinds == ["timeout"]
