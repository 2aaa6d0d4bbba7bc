"""Per-key locks: writers of one decision id take turns, other ids run freely; across
replicas too when they share a Redis."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from a2a.store.errors import StoreUnavailable
from a2a.workers import Saturated

if TYPE_CHECKING:
    import redis
    import redis.asyncio

log = logging.getLogger(__name__)

#: Seconds between two tries of a lock another replica holds.
POLL_SECONDS = 0.005
#: Seconds a Redis command may take; past it the lock is taken as granted (best effort).
REDIS_TIMEOUT_SECONDS = 1.0


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
                    if self._replicas is None:
                        yield
                    else:
                        async with self._replicas.hold(key):
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


class ReplicaLocks:
    """One lock per key shared by every replica on one Redis (CSTP_RATE_LIMIT_STORAGE=
    redis://...): updates, links and deletes of one decision through two replicas take
    turns, so each reads what the other wrote and none is lost.

    A lock is a Redis key set with NX and a lease of `lease_seconds` (redis-py's Lock; its
    release deletes the key only while this holder's token is in it). The lease outlasts
    any call (their deadline is CSTP_CHROMA_TIMEOUT_SECONDS), so it lapses only for a
    replica that died holding it.
    - Another replica's lock still held after `max_wait_seconds`: Saturated (-32005).
    - Redis failing: a warning, and the call goes on, serialised within its process only
      (as a2a.decisions.claims does).
    Keys are per collection, so tenants never wait on each other.
    """

    def __init__(
        self,
        client: redis.asyncio.Redis,
        collection: str,
        lease_seconds: float,
        max_wait_seconds: float,
    ) -> None:
        import redis  # loaded already: `client` is one of its objects

        self._redis = client
        self._failure = redis.RedisError
        self._prefix = lock_prefix(collection)
        self._lease = lease_seconds
        self._max_wait = max_wait_seconds

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold `key`'s lock across the replicas for the block. Raises Saturated when
        another replica holds it past `max_wait_seconds`."""
        lock = self._redis.lock(
            self._prefix + key,
            timeout=self._lease,
            sleep=POLL_SECONDS,
            blocking_timeout=self._max_wait,
            thread_local=False,
        )
        try:
            acquired = await lock.acquire()
        except self._failure as exc:
            log.warning("replica locks: Redis failed (%s); %r held in this process only", exc, key)
            acquired = None
        if acquired is False:
            raise Saturated(math.ceil(self._max_wait))
        try:
            yield
        finally:
            if acquired:
                try:
                    await lock.release()
                except self._failure as exc:  # LockNotOwnedError: the lease ran out
                    log.warning("replica locks: %r not released (%s)", key, exc)


class WriterLocks:
    """ReplicaLocks' locks, taken by a writer outside the service (`cstp index`, `--prune`)
    with a blocking Redis client: its read-and-write of a record takes turns with the
    replicas' updates of it, so neither loses the other's write.

    A key another writer holds past `max_wait_seconds`: StoreUnavailable naming it (a
    replica stuck that long is stuck on Chroma). Redis failing: a warning, and the run goes
    on unserialised, as before replica locks.
    """

    def __init__(
        self, client: redis.Redis, collection: str, lease_seconds: float, max_wait_seconds: float
    ) -> None:
        import redis  # loaded already: `client` is one of its objects

        self._redis = client
        self._failure = redis.RedisError
        self._prefix = lock_prefix(collection)
        self._lease = lease_seconds
        self._max_wait = max_wait_seconds

    @classmethod
    def from_uri(
        cls, uri: str, collection: str, lease_seconds: float, max_wait_seconds: float
    ) -> WriterLocks | None:
        """Locks in the Redis at `uri` (`redis://` or `rediss://`), else None."""
        if not uri.startswith(("redis://", "rediss://")):
            return None
        import redis

        client = redis.Redis.from_url(
            uri,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
        )
        return cls(client, collection, lease_seconds, max_wait_seconds)

    @contextlib.contextmanager
    def hold_all(self, keys: Iterable[str]) -> Iterator[None]:
        """Hold the lock of every one of `keys` for the block, taken in sorted order as
        KeyedLocks.hold_all takes them."""
        taken = []
        try:
            for key in sorted(set(keys)):
                lock = self._redis.lock(
                    self._prefix + key,
                    timeout=self._lease,
                    sleep=POLL_SECONDS,
                    blocking_timeout=self._max_wait,
                    thread_local=False,
                )
                try:
                    acquired = lock.acquire()
                except self._failure as exc:
                    log.warning("writer locks: Redis failed (%s); writing unserialised", exc)
                    break
                if not acquired:
                    raise StoreUnavailable(
                        f"decision {key!r} stayed locked by another writer for {self._max_wait:g} s"
                    )
                taken.append(lock)
            yield
        finally:
            for lock in reversed(taken):
                try:
                    lock.release()
                except self._failure as exc:  # LockNotOwnedError: the lease ran out
                    log.warning("writer locks: %r not released (%s)", lock.name, exc)

    def close(self) -> None:
        """Close the connections to Redis."""
        self._redis.close()


def lock_prefix(collection: str) -> str:
    """What the name of a decision's lock starts with, the decision's id following: per
    collection, so tenants never wait on each other."""
    return f"cstp:lock:{collection}:"


def replica_redis(uri: str) -> redis.asyncio.Redis | None:
    """A client of the Redis at `uri` (`redis://` or `rediss://`, CSTP_RATE_LIMIT_STORAGE)
    for ReplicaLocks, one a process, shared by its tenants; None for another storage.
    Its owner closes it (`aclose`)."""
    if not uri.startswith(("redis://", "rediss://")):
        return None
    # Imported here: a replica without a shared Redis does not pay for it (~70 ms).
    import redis.asyncio

    return redis.asyncio.Redis.from_url(
        uri,
        socket_timeout=REDIS_TIMEOUT_SECONDS,
        socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
    )
