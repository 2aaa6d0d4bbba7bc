"""Rate-limit admission of each JSON-RPC call, on slowapi's Limiter and `limits` storages.

How much of slowapi is used: its `Limiter` is built from the settings and owns the storage
(`storage_from_string`), the moving-window strategy over it, the in-memory fallback strategy
and the `_storage_dead` switch that its `limiter` property reads to pick between the two.
slowapi's own request check is not used: it counts HTTP requests per route and reads the key
from the Starlette request, while CSTP counts JSON-RPC calls (each call of a batch, and
notifications) per agent and per method. So `RateLimits.admit` hits `Limiter.limiter` once per
limit that applies to the call; the counting itself is all `limits`.

The storages are the sync ones, called in worker threads (`anyio.to_thread`), so a slow Redis
never blocks the event loop. When Redis fails, either (default) the per-process fallback takes
over with a logged warning, or (`fail_closed`) calls are refused with RateLimited (-32002,
`data.retryAfter`): the client's right reaction, back off and retry, is the same as for a
limit, -32003 means Chroma, and -32603 would hide a known condition. In both cases Redis is
probed again after 1, 2, 4 ... 30 seconds and used again once it answers.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from anyio import to_thread
from limits import RateLimitItem
from limits.errors import StorageError
from limits.strategies import RateLimiter
from slowapi import Limiter
from slowapi.util import get_remote_address

from a2a.errors import RateLimited
from a2a.limits.config import LimitPolicy, describe_storage
from a2a.rpc.methods import CallContext
from a2a.settings import Settings

log = logging.getLogger(__name__)

#: Seconds a Redis command may take before the storage counts as down.
STORAGE_TIMEOUT_SECONDS = 1.0
#: First part of every key in the storage, so CSTP's keys stand apart in a shared Redis.
KEY_PREFIX = "cstp"
#: Longest wait, in seconds, between probes of a storage that is down.
MAX_PROBE_INTERVAL_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Quota:
    """One limit's state right after a call was counted against it.

    `remaining` calls left in the window; `reset_at` epoch seconds (UTC) when the oldest
    counted call leaves the moving window; `refused` when this limit turned the call away.
    """

    limit: RateLimitItem
    remaining: int
    reset_at: float
    refused: bool

    def retry_after(self, now: float) -> int:
        """Whole seconds until a call would be admitted again, at least 1."""
        return max(1, math.ceil(self.reset_at - now))


class RateLimits:
    """The dispatcher's Admission: per-agent, per-method moving-window limits.

    Keys are `(agent, scope)`: scope `*` for the overall limit, the method name for a
    method's own, so agents never share a bucket (CONTRACT.md section Rate limiting).
    """

    def __init__(
        self,
        policy: LimitPolicy,
        limiter: Limiter,
        *,
        fail_closed: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._policy = policy
        self._limiter = limiter
        self._fail_closed = fail_closed
        self._clock = clock
        self._probe_at = 0.0
        self._probe_interval = 1.0
        self._tracked: dict[int, list[Quota]] = {}

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        served: Iterable[str],
        clock: Callable[[], float] = time.monotonic,
    ) -> RateLimits:
        """Limits from CSTP_RATE_LIMIT_* and CSTP_RATE_LIMITS for the `served` methods.

        `clock` (monotonic seconds) times the probes of a storage that is down. Raises
        ValueError naming CSTP_RATE_LIMITS when it names a method not served.
        """
        policy = LimitPolicy.from_strings(settings.rate_limit_default, settings.rate_limits, served)
        return cls(
            policy, _limiter(settings), fail_closed=settings.rate_limit_fail_closed, clock=clock
        )

    @property
    def storage_down(self) -> bool:
        """True while the shared storage is taken as unreachable."""
        return bool(self._limiter._storage_dead)

    async def admit(self, method: str, ctx: CallContext) -> None:
        """Count one call of `method` by `ctx.agent`; raises RateLimited when over a limit.

        The overall limit is counted first, then the method's own; a call turned away by a
        limit is not counted in that limit's window. Raises RateLimited (-32002) with the
        whole seconds until the window frees a slot, or, with fail-closed storage that is
        down, until the storage is probed again.
        """
        checks = self._policy.checks(method)
        if not checks:
            return
        quotas = await self._count(ctx.agent, checks)
        tracked = self._tracked.get(id(ctx))
        if tracked is not None:
            tracked.extend(quotas)
        refused = [quota for quota in quotas if quota.refused]
        if refused:
            raise RateLimited(refused[0].retry_after(time.time()), str(refused[0].limit))

    @contextmanager
    def tracking(self, ctx: CallContext) -> Iterator[list[Quota]]:
        """Collects the Quota of every limit the calls made under `ctx` were counted against."""
        quotas: list[Quota] = []
        self._tracked[id(ctx)] = quotas
        try:
            yield quotas
        finally:
            del self._tracked[id(ctx)]

    async def _count(self, agent: str, checks: list[tuple[str, RateLimitItem]]) -> list[Quota]:
        if self.storage_down:
            await self._probe()
        if self.storage_down and self._fail_closed:
            raise RateLimited(math.ceil(self._probe_at - self._clock()), "storage unavailable")
        try:
            return await to_thread.run_sync(_hit_all, self._limiter.limiter, agent, checks)
        except StorageError as exc:
            self._storage_failed(exc)
            if self._fail_closed:
                raise RateLimited(math.ceil(self._probe_interval), "storage unavailable") from None
            return await to_thread.run_sync(_hit_all, self._limiter.limiter, agent, checks)

    def _storage_failed(self, exc: StorageError) -> None:
        if self.storage_down:
            return
        self._limiter._storage_dead = True
        self._probe_interval = 1.0
        self._probe_at = self._clock() + self._probe_interval
        fallback = "refusing calls" if self._fail_closed else "falling back to per-process limits"
        log.warning("rate-limit storage unreachable (%s); %s", exc.storage_error, fallback)

    async def _probe(self) -> None:
        now = self._clock()
        if now < self._probe_at:
            return
        # Set the next probe before awaiting, so concurrent calls do not all probe at once.
        self._probe_interval = min(self._probe_interval * 2, MAX_PROBE_INTERVAL_SECONDS)
        self._probe_at = now + self._probe_interval
        if await to_thread.run_sync(self._limiter._storage.check):
            self._limiter._storage_dead = False
            log.warning("rate-limit storage answers again; shared limits restored")


def _hit_all(
    strategy: RateLimiter, agent: str, checks: list[tuple[str, RateLimitItem]]
) -> list[Quota]:
    """Runs in a worker thread: count the call against each limit until one refuses it."""
    quotas = []
    for scope, item in checks:
        admitted = strategy.hit(item, KEY_PREFIX, agent, scope)
        stats = strategy.get_window_stats(item, KEY_PREFIX, agent, scope)
        quotas.append(Quota(item, stats.remaining, stats.reset_time, not admitted))
        if not admitted:
            break
    return quotas


def _limiter(settings: Settings) -> Limiter:
    uri = settings.rate_limit_storage
    # Wrapped, every storage failure is one exception type (limits.errors.StorageError).
    options: dict[str, Any] = {"wrap_exceptions": True}
    if not uri.startswith("memory"):
        options.update(
            socket_timeout=STORAGE_TIMEOUT_SECONDS, socket_connect_timeout=STORAGE_TIMEOUT_SECONDS
        )
    log.info("rate-limit storage %s", describe_storage(uri))
    return Limiter(
        # slowapi's key function reads HTTP requests; CSTP keys on the agent id instead.
        key_func=get_remote_address,
        storage_uri=uri,
        storage_options=options,
        strategy="moving-window",
        in_memory_fallback_enabled=not settings.rate_limit_fail_closed,
    )
