"""Per-key asyncio locks: writers of one decision id take turns, other ids run freely."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass


@dataclass(slots=True)
class _Key:
    lock: asyncio.Lock
    users: int = 0
    failures: int = 0
    failure: Exception | None = None


class KeyedLocks:
    """One asyncio.Lock per key while anyone holds or waits for it; dropped afterwards.

    Serialises the read-check-write of one id inside one process, so two concurrent
    recordDecision calls with the same id store one record and answer one `created: true`.

    When a holder's block raises one of `shared_failures` (the store failing or timing
    out), those that were waiting for the key raise it too as they get it, rather than
    each spend a store deadline of their own: N calls on one id while Chroma hangs are
    answered within about one deadline, not N.
    """

    def __init__(self, shared_failures: tuple[type[Exception], ...] = ()) -> None:
        self._keys: dict[str, _Key] = {}
        self._shared_failures = shared_failures

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold the lock of `key` for the duration of the block."""
        entry = self._keys.setdefault(key, _Key(asyncio.Lock()))
        entry.users += 1
        failures = entry.failures
        try:
            async with entry.lock:
                if entry.failures != failures and entry.failure is not None:
                    raise entry.failure
                try:
                    yield
                except self._shared_failures as exc:
                    entry.failures += 1
                    entry.failure = exc
                    raise
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._keys[key]

    @contextlib.asynccontextmanager
    async def hold_all(self, keys: Iterable[str]) -> AsyncIterator[None]:
        """Hold the locks of every one of `keys` for the block, taken in sorted order (two
        callers wanting overlapping sets never wait on each other in a circle)."""
        async with contextlib.AsyncExitStack() as stack:
            for key in sorted(set(keys)):
                await stack.enter_async_context(self.hold(key))
            yield

    def __len__(self) -> int:
        return len(self._keys)
