"""Rate-limit admission of each JSON-RPC call, on `limits` storages and strategies.

The counting is `limits` (the engine slowapi is built on) used directly: slowapi's public
API checks HTTP requests per route, keyed from the Starlette request, and has no door for
CSTP's unit, one JSON-RPC call (each call of a batch, notifications too) per agent and
per method.

The storages are the sync ones. A network storage (Redis, on the connections of a client
a2a.redis_clients builds) is called on the background lane (a2a.concurrency), so a slow
Redis never blocks the event loop; the in-memory one (the default, and the fallback) is
counted on the event loop: a few microseconds of dict and list work, where a thread hop
cost ~0.1 ms of CPU per call. When Redis fails, either (default) a
per-process memory storage takes over with a logged warning, or (`fail_closed`) calls are
refused with RateLimited (-32002, `data.retryAfter`): the client's right reaction, back off
and retry, is the same as for a limit, -32003 means Chroma, and -32603 would hide a known
condition. In both cases Redis is probed again after 1, 2, 4 ... 30 seconds and used again
once it answers.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable, Iterable
from typing import Any

from limits import RateLimitItem
from limits.errors import StorageError
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter, RateLimiter

from a2a.concurrency import Lane
from a2a.errors import RateLimited
from a2a.limits.config import LimitPolicy, describe_storage
from a2a.limits.outage import Outage
from a2a.redis_clients import blocking_redis
from a2a.rpc.methods import CallContext
from a2a.rpc.quota import Quota
from a2a.settings import Settings

log = logging.getLogger(__name__)

#: First part of every key in the storage, so CSTP's keys stand apart in a shared Redis.
KEY_PREFIX = "cstp"


class RateLimits:
    """The dispatcher's Admission: per-agent, per-method moving-window limits.

    Buckets are keyed `(agent, "*")` for the overall limit and `(agent, method)` for a
    method's own, so agents never share a bucket (CONTRACT.md section Rate limiting).
    A network storage is counted on `lane` (default: a lane of one thread of its own).
    """

    def __init__(
        self,
        policy: LimitPolicy,
        storage: Storage,
        *,
        fail_closed: bool = False,
        clock: Callable[[], float] = time.monotonic,
        lane: Lane | None = None,
    ) -> None:
        self._policy = policy
        self._lane = lane or Lane(1, name="cstp-limits")
        self._shared_storage = storage
        self._shared = MovingWindowRateLimiter(storage)
        self._fallback = MovingWindowRateLimiter(MemoryStorage())
        self._fail_closed = fail_closed
        self._outage = Outage("rate-limit storage", clock, restored="shared limits restored")

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        served: Iterable[str],
        clock: Callable[[], float] = time.monotonic,
        lane: Lane | None = None,
    ) -> RateLimits:
        """Limits from CSTP_RATE_LIMIT_* and CSTP_RATE_LIMITS for the `served` methods.

        `clock` (monotonic seconds) times the probes of a storage that is down; a network
        storage is counted on `lane` (the service's background lane). Raises
        ValueError naming CSTP_RATE_LIMITS when it names a method not served.
        """
        policy = LimitPolicy.from_strings(settings.rate_limit_default, settings.rate_limits, served)
        return cls(
            policy,
            _open_storage(settings),
            fail_closed=settings.rate_limit_fail_closed,
            clock=clock,
            lane=lane,
        )

    @property
    def storage_down(self) -> bool:
        """True while the shared storage is taken as unreachable."""
        return self._outage.down

    @property
    def _strategy(self) -> RateLimiter:
        return self._fallback if self._outage.down else self._shared

    async def admit(self, method: str, ctx: CallContext, cost: int = 1) -> list[Quota]:
        """Count one call of `method` by `ctx.agent`, as `cost` calls (a call asking N
        peers costs 1 + N); the Quota of each limit counted.

        The overall limit is counted first, then the method's own (none for a method that is
        not served); a call turned away by a limit is not counted in that limit's window.
        Raises RateLimited (-32002, carrying the quotas) with the whole seconds until the
        window frees a slot, or, with fail-closed storage that is down, until the storage is
        probed again.
        """
        checks = self._policy.checks(method)
        if not checks:
            return []
        quotas = await self._count(ctx.agent, checks, cost)
        refused = [quota for quota in quotas if quota.refused]
        if refused:
            retry_after = refused[0].retry_after(time.time())
            raise RateLimited(retry_after, str(refused[0].limit), quotas)
        return quotas

    async def _count(
        self, agent: str, checks: list[tuple[str, RateLimitItem]], cost: int
    ) -> list[Quota]:
        outage = self._outage
        # A try is due while down: probe the storage (cheaper than counting there).
        if outage.down and not outage.skip() and await self._lane.run(self._probe):
            outage.succeeded()
        if outage.down and self._fail_closed:
            raise RateLimited(math.ceil(outage.next_try_in), "storage unavailable")
        strategy = self._strategy
        if isinstance(strategy.storage, MemoryStorage):
            return _hit_all(strategy, agent, checks, cost)
        try:
            return await self._lane.run(functools.partial(_hit_all, strategy, agent, checks, cost))
        except StorageError as exc:
            fallback = (
                "refusing calls" if self._fail_closed else "falling back to per-process limits"
            )
            outage.failed(exc.storage_error, fallback)
            if self._fail_closed:
                raise RateLimited(math.ceil(outage.next_try_in), "storage unavailable") from None
            return _hit_all(self._fallback, agent, checks, cost)  # in memory: on the loop

    def _probe(self) -> bool:
        return bool(self._shared_storage.check())


def _hit_all(
    strategy: RateLimiter, agent: str, checks: list[tuple[str, RateLimitItem]], cost: int = 1
) -> list[Quota]:
    """Runs on the lane: count the call (`cost` times) against each limit until one
    refuses it."""
    quotas = []
    for scope, item in checks:
        admitted = strategy.hit(item, KEY_PREFIX, agent, scope, cost=cost)
        stats = strategy.get_window_stats(item, KEY_PREFIX, agent, scope)
        quotas.append(Quota(item, stats.remaining, stats.reset_time, not admitted))
        if not admitted:
            break
    return quotas


def _open_storage(settings: Settings) -> Storage:
    uri = settings.rate_limit_storage
    # Wrapped, every storage failure is one exception type (limits.errors.StorageError).
    options: dict[str, Any] = {"wrap_exceptions": True}
    client = blocking_redis(uri)
    if client is not None:  # limits' Redis storage on the connections of our client
        options["connection_pool"] = client.connection_pool
    log.info("rate-limit storage %s", describe_storage(uri))
    storage = storage_from_string(uri, **options)
    assert isinstance(storage, Storage), "a sync storage scheme (STORAGE_SCHEMES)"
    return storage
