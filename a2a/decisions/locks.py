"""Per-key locks: writers of one decision id take turns, other ids run freely; across
replicas too when they share a Redis (a2a.decisions.replica_locks)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from a2a.decisions.replica_locks import ReplicaLocks


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

    def __init__(
        self,
        shared_failures: tuple[type[Exception], ...] = (),
        replicas: ReplicaLocks | None = None,
    ) -> None:
        """`replicas`: the same keys locked across the replicas sharing a Redis, taken
        once this process's lock of a key is held (None: within this process only)."""
        self._keys: dict[str, _Key] = {}
        self._shared_failures = shared_failures
        self._replicas = replicas

    @contextlib.asynccontextmanager
    async def hold(self, key: str, until: float | None = None) -> AsyncIterator[None]:
        """Hold the lock of `key` for the duration of the block; with replicas, waiting
        for another replica's lock at most until `until` (time.monotonic(); default: its
        own wait bound)."""
        entry = self._keys.setdefault(key, _Key(asyncio.Lock()))
        entry.users += 1
        failures = entry.failures
        try:
            async with entry.lock:
                if entry.failures != failures and entry.failure is not None:
                    raise entry.failure
                try:
                    if self._replicas is None:
                        yield
                    else:
                        async with self._replicas.hold(key, until):
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
        callers wanting overlapping sets never wait on each other in a circle). Other
        replicas' locks are waited for one wait bound in all, not one a key, so the first
        lock's lease still has its time when the last is taken."""
        until = None if self._replicas is None else time.monotonic() + self._replicas.max_wait
        async with contextlib.AsyncExitStack() as stack:
            for key in sorted(set(keys)):
                await stack.enter_async_context(self.hold(key, until))
            yield

    def __len__(self) -> int:
        return len(self._keys)
