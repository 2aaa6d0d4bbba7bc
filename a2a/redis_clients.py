"""The one place Redis clients are built: from the CSTP_RATE_LIMIT_STORAGE URI the replicas
share, for their rate limits (a2a.limits), creation claims and decision locks
(a2a.decisions). Each command is bounded by REDIS_TIMEOUT_SECONDS.

redis-py is imported only when the storage names a Redis: a process without a shared Redis
does not pay for it (~70 ms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis
    import redis.asyncio

#: Seconds a Redis command (or a connection) may take before it counts as failed.
REDIS_TIMEOUT_SECONDS = 1.0


def redis_url(storage_uri: str) -> str | None:
    """The redis-py URL of a CSTP_RATE_LIMIT_STORAGE URI naming a Redis, else None:
    `redis://` and `rediss://` as given, `redis+unix:///path` (limits' spelling) as
    `unix:///path` (reported: a unix-socket Redis shared no locks, silently)."""
    if storage_uri.startswith(("redis://", "rediss://")):
        return storage_uri
    if storage_uri.startswith("redis+unix://"):
        return "unix://" + storage_uri.removeprefix("redis+unix://")
    return None


def blocking_redis(storage_uri: str) -> redis.Redis | None:
    """A blocking client of the Redis of `storage_uri` (`redis_url`), None when the storage
    is not a Redis. Its owner closes it."""
    url = redis_url(storage_uri)
    if url is None:
        return None
    import redis

    return redis.Redis.from_url(
        url, socket_timeout=REDIS_TIMEOUT_SECONDS, socket_connect_timeout=REDIS_TIMEOUT_SECONDS
    )


def async_redis(storage_uri: str) -> redis.asyncio.Redis | None:
    """An asyncio client of the Redis of `storage_uri` (`redis_url`), None when the storage
    is not a Redis. Its owner closes it (`aclose`)."""
    url = redis_url(storage_uri)
    if url is None:
        return None
    import redis.asyncio

    return redis.asyncio.Redis.from_url(
        url, socket_timeout=REDIS_TIMEOUT_SECONDS, socket_connect_timeout=REDIS_TIMEOUT_SECONDS
    )
