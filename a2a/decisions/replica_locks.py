"""One lock per decision across the replicas that share a Redis, and for `cstp index`.

The replicas' writes of one decision (updates, links, deletes) read the records they touch
and write them back; with several replicas on one Chroma server, two such writes at once
each read the same record and the later one wins, losing an acknowledged write. When the
replicas share a Redis (CSTP_RATE_LIMIT_STORAGE=redis://..., the storage of their rate
limits and creation claims), each holds the Redis lock of every decision it writes:
`ReplicaLocks` inside the service (asyncio), `WriterLocks` in `cstp index` (blocking).

A lock is redis-py's Lock: a key `cstp:lock:<collection>:<id>` set with NX and a lease,
deleted on release only while it still holds its holder's token. Keys are per collection,
so tenants never wait on each other. When Redis fails, writes go on serialised within each
process only (an acknowledged write may then be lost, as without a shared Redis); Redis is
skipped meanwhile and tried again after 1, 2, 4 ... 30 s (a2a.limits.outage.Outage).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from a2a.errors import LockedElsewhere, StoreUnavailable
from a2a.limits.outage import Outage
from a2a.redis_clients import async_redis, blocking_redis

if TYPE_CHECKING:
    import redis
    import redis.asyncio
    import redis.lock

log = logging.getLogger(__name__)

#: Seconds between two tries of a lock another writer holds.
POLL_SECONDS = 0.005
#: What the service does while Redis is away (logged once an outage).
FALLBACK = "decisions' writes serialised within each process only"
#: What `cstp index` does while Redis is away.
INDEX_FALLBACK = "index runs unserialised with the replicas"

#: Longest wait between two tries of a Redis that is away, in seconds: once it is back, a
#: replica still skipping it writes unserialised with those that use it again, so the
#: tries are kept close (reported: updates lost for 2 s after Redis came back; the rate
#: limits' 30 s would allow 30).
RETRY_CAP_SECONDS = 4.0


@dataclass(frozen=True)
class SharedRedis:
    """The Redis the replicas share (`replica_redis`): one asyncio client a process, used
    by every tenant's ReplicaLocks, and whether it is away. Its owner closes it."""

    client: redis.asyncio.Redis
    outage: Outage = field(
        default_factory=lambda: Outage("replica locks' Redis", max_retry_seconds=RETRY_CAP_SECONDS)
    )
    #: Locks whose acquire failed in Redis, with their tokens: the SET may have been
    #: applied all the same (its answer lost), so each is released once Redis answers.
    unsure: list[tuple[redis.asyncio.lock.Lock, bytes]] = field(default_factory=list)

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self.client.aclose()


class ReplicaLocks:
    """The service's side: a decision's lock across the replicas of one collection.

    - `lease_seconds` outlasts any call (their deadline is CSTP_CHROMA_TIMEOUT_SECONDS), so
      a lock lapses only when its replica died holding it; until then, calls that write
      that decision (or one linked to it) are refused with -32005.
    - `max_wait_seconds` bounds a call's wait for locks others hold, over all the locks it
      takes (KeyedLocks.hold_all); past it, LockedElsewhere.
    """

    def __init__(
        self, shared: SharedRedis, collection: str, lease_seconds: float, max_wait_seconds: float
    ) -> None:
        import redis  # loaded already: the client is one of its objects

        self._shared = shared
        self._redis = shared.client
        self._outage = shared.outage
        self._failure = redis.RedisError
        self._lapsed = redis.exceptions.LockError
        self._prefix = lock_prefix(collection)
        self._lease = lease_seconds
        self.max_wait = max_wait_seconds

    @contextlib.asynccontextmanager
    async def hold(self, key: str, until: float | None = None) -> AsyncIterator[None]:
        """Hold `key`'s lock for the block, waiting for another holder until `until`
        (time.monotonic(); default: `max_wait_seconds` from now). Raises LockedElsewhere."""
        if self._outage.skip():
            yield
            return
        lock = self._redis.lock(self._prefix + key, **_options(self._lease, until, self.max_wait))
        token = uuid.uuid4().hex.encode()
        try:
            acquired: bool | None = await lock.acquire(token=token)
        except self._failure as exc:
            self._shared.unsure.append((lock, token))
            self._outage.failed(exc, FALLBACK)
            acquired = None
        else:
            self._outage.succeeded()
            if self._shared.unsure:
                await self._release_unsure()
        if acquired is False:
            raise LockedElsewhere(math.ceil(self.max_wait))
        try:
            yield
        finally:
            if acquired:
                try:
                    await lock.release()
                except self._lapsed:  # held past its lease: Redis itself is fine
                    log.warning("replica locks: %r held past its lease", key)
                except self._failure as exc:
                    self._outage.failed(exc, FALLBACK)

    async def _release_unsure(self) -> None:
        """Release the locks an acquire may have taken while Redis failed (reported: a
        hung Redis kept such a lock, nobody's, blocking its decision for the lease)."""
        unsure = list(self._shared.unsure)
        self._shared.unsure.clear()
        for lock, token in unsure:
            try:
                await lock.do_release(token)
            except self._lapsed:  # never taken, or lapsed: nothing to release
                pass
            except self._failure:
                self._shared.unsure.append((lock, token))  # next time Redis answers


class WriterLocks:
    """`cstp index`'s side (blocking): the locks of a batch's records, so its read and
    rewrite of them takes turns with the replicas' updates.

    All of a batch's locks are waited for `max_wait_seconds` in all, then their leases are
    renewed, so each has its whole lease for the read and the write. A lock another writer
    holds past the wait, or lost before the renewal: StoreUnavailable naming the id.
    """

    def __init__(
        self,
        client: redis.Redis,
        collection: str,
        lease_seconds: float,
        max_wait_seconds: float,
        outage: Outage | None = None,
    ) -> None:
        import redis  # loaded already: `client` is one of its objects

        self._redis = client
        self._failure = redis.RedisError
        self._lapsed = redis.exceptions.LockError
        self._prefix = lock_prefix(collection)
        self._lease = lease_seconds
        self._max_wait = max_wait_seconds
        self._outage = outage or Outage("index locks' Redis", max_retry_seconds=RETRY_CAP_SECONDS)

    @classmethod
    def from_uri(
        cls, uri: str, collection: str, lease_seconds: float, max_wait_seconds: float
    ) -> WriterLocks | None:
        """Locks in the Redis of the storage URI `uri` (a2a.redis_clients), else None."""
        client = blocking_redis(uri)
        return None if client is None else cls(client, collection, lease_seconds, max_wait_seconds)

    @contextlib.contextmanager
    def hold_all(self, keys: Iterable[str]) -> Iterator[None]:
        """Hold the lock of every one of `keys` for the block, taken in sorted order as
        KeyedLocks.hold_all takes them. Raises StoreUnavailable naming a key."""
        taken: list[redis.lock.Lock] = []
        unsure: list[tuple[redis.lock.Lock, str]] = []
        try:
            if not self._outage.skip():
                self._take(sorted(set(keys)), taken, unsure)
            yield
        finally:
            for lock, token in unsure:  # its SET may have been applied, the answer lost
                with contextlib.suppress(self._failure):
                    lock.do_release(token)
            for lock in reversed(taken):
                try:
                    lock.release()
                except self._lapsed:  # held past its lease: Redis itself is fine
                    log.warning("index locks: %r held past its lease", lock.name)
                except self._failure as exc:
                    self._outage.failed(exc, INDEX_FALLBACK)

    def _take(
        self,
        keys: list[str],
        taken: list[redis.lock.Lock],
        unsure: list[tuple[redis.lock.Lock, str]],
    ) -> None:
        until = time.monotonic() + self._max_wait
        try:
            for key in keys:
                options = _options(self._lease, until, self._max_wait)
                lock = self._redis.lock(self._prefix + key, **options)
                token = uuid.uuid4().hex
                unsure.append((lock, token))  # until Redis answers the acquire
                acquired = lock.acquire(token=token)
                unsure.pop()
                if not acquired:
                    raise StoreUnavailable(
                        f"decision {key!r} stayed locked by another writer for"
                        f" {self._max_wait:g} s (a writer that died holding it lets go"
                        f" within {self._lease:g} s); run again"
                    )
                taken.append(lock)
            for lock in taken:
                lock.reacquire()  # the whole lease again, from now
        except self._lapsed as exc:  # a lease ran out while waiting for the others
            raise StoreUnavailable(f"a decision's lock lapsed while waiting: {exc}") from None
        except self._failure as exc:
            self._outage.failed(exc, INDEX_FALLBACK)
        else:
            self._outage.succeeded()

    def close(self) -> None:
        """Close the connections to Redis."""
        self._redis.close()


def _options(lease: float, until: float | None, max_wait: float) -> dict[str, Any]:
    """redis-py Lock options: a lease of `lease` seconds, polled every POLL_SECONDS until
    `until` (time.monotonic(); None: `max_wait` from now; once past it, one try), and the
    token kept on the lock object itself, one object a hold (not in a thread-local)."""
    wait = max_wait if until is None else max(0.0, until - time.monotonic())
    return {
        "timeout": lease,
        "sleep": POLL_SECONDS,
        "blocking_timeout": wait,
        "thread_local": False,
    }


def lock_prefix(collection: str) -> str:
    """What a decision's lock is named, its id following: per collection, so tenants never
    wait on each other."""
    return f"cstp:lock:{collection}:"


def replica_redis(storage_uri: str) -> SharedRedis | None:
    """The Redis of CSTP_RATE_LIMIT_STORAGE (a2a.redis_clients) for ReplicaLocks, one
    client a process, shared by its tenants; None when the storage is not a Redis. Its owner
    closes it (`aclose`)."""
    client = async_redis(storage_uri)
    return None if client is None else SharedRedis(client)
