"""One creator across replicas: a Redis SET NX claim per new record (issue 25).

Within one process, writes of one id take turns (a2a.decisions.locks), so one of them is
answered `created: true`. Two processes sharing a Chroma server can both read back their
own identical record (same content, same millisecond stamp) and both claim it; when a
shared Redis is configured (CSTP_RATE_LIMIT_STORAGE=redis://...), the first to SET NX the
record's claim key is the creator and the others answer `created: false`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis

log = logging.getLogger(__name__)

#: How long a claim is kept (seconds): far past any write's duration. cstp.deleteDecision
#: releases the claims of the ids it deletes, so a deleted id recorded again is created anew.
CLAIM_SECONDS = 600
#: Seconds a Redis command may take; past it the claim is granted (best effort).
REDIS_TIMEOUT_SECONDS = 1.0


class CreationClaims:
    """Claims of new records in one Redis, keyed by collection and id (the value is the
    content hash claimed)."""

    def __init__(self, client: redis.Redis, collection: str) -> None:
        import redis  # loaded already: `client` is one of its objects

        self._redis = client
        self._failure = redis.RedisError
        self._prefix = f"cstp:created:{collection}:"

    @classmethod
    def from_uri(cls, uri: str, collection: str) -> CreationClaims | None:
        """Claims in the Redis at `uri` (`redis://` or `rediss://`), else None."""
        if not uri.startswith(("redis://", "rediss://")):
            return None
        # Imported here: a replica without a shared Redis does not pay for it (~70 ms).
        import redis

        client = redis.Redis.from_url(
            uri,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
        )
        return cls(client, collection)

    def claim(self, keys: list[tuple[str, str]]) -> list[bool]:
        """For each (id, content hash): True when this call is the first to claim it.

        Blocking (call it in a worker thread). When Redis fails, every claim is granted
        and a warning logged: the one-creator rule then holds within each process only.
        """
        try:
            with self._redis.pipeline(transaction=False) as pipe:
                for record_id, content_hash in keys:
                    pipe.set(
                        f"{self._prefix}{record_id}",
                        content_hash,
                        nx=True,
                        ex=CLAIM_SECONDS,
                    )
                return [bool(answer) for answer in pipe.execute()]
        except self._failure as exc:
            log.warning("creation claims: Redis failed (%s); granting %d claims", exc, len(keys))
            return [True] * len(keys)

    def release(self, ids: list[str]) -> None:
        """Forget the claims of `ids` (deleted records: their next write is a creation).

        Blocking. When Redis fails a warning is logged; the claims then lapse after
        CLAIM_SECONDS.
        """
        if not ids:
            return
        try:
            self._redis.delete(*(f"{self._prefix}{record_id}" for record_id in ids))
        except self._failure as exc:
            log.warning("creation claims: Redis failed (%s); %d claims not released", exc, len(ids))
