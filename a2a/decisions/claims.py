"""One creator across replicas: a Redis SET NX claim per new record (issue 25).

Within one process, writes of one id take turns (a2a.decisions.locks), so one of them is
answered `created: true`. Two processes sharing a Chroma server can both read back their
own identical record (same content, same millisecond stamp) and both claim it; when a
shared Redis is configured (CSTP_RATE_LIMIT_STORAGE=redis://...), the first to SET NX the
record's claim key is the creator and the others answer `created: false`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a.decisions.replica_locks import RETRY_CAP_SECONDS
from a2a.limits.outage import Outage
from a2a.redis_clients import blocking_redis

if TYPE_CHECKING:
    import redis

#: How long a claim is kept (seconds): far past any write's duration. cstp.deleteDecision
#: releases the claims of the ids it deletes, so a deleted id recorded again is created anew.
CLAIM_SECONDS = 600
#: What writes do while Redis is away (logged once an outage).
GRANTED = "every creation claim granted, one creator per process only"


class CreationClaims:
    """Claims of new records in one Redis, keyed by collection and id (the value is the
    content hash claimed)."""

    def __init__(self, client: redis.Redis, collection: str) -> None:
        import redis  # loaded already: `client` is one of its objects

        self._redis = client
        self._failure = redis.RedisError
        self._prefix = f"cstp:created:{collection}:"
        # While Redis is away it is skipped, not waited on with every write.
        self._outage = Outage("creation claims' Redis", max_retry_seconds=RETRY_CAP_SECONDS)

    @classmethod
    def from_uri(cls, uri: str, collection: str) -> CreationClaims | None:
        """Claims in the Redis of the storage URI `uri` (`redis://`, `rediss://`,
        `redis+unix://`; a2a.redis_clients), else None."""
        client = blocking_redis(uri)
        if client is None:
            return None
        return cls(client, collection)

    def claim(self, keys: list[tuple[str, str]]) -> list[bool]:
        """For each (id, content hash): True when this call is the first to claim it.

        Blocking (call it in a worker thread). When Redis fails, every claim is granted
        and a warning logged (once an outage): the one-creator rule then holds within
        each process only.
        """
        if self._outage.skip():
            return [True] * len(keys)
        try:
            with self._redis.pipeline(transaction=False) as pipe:
                for record_id, content_hash in keys:
                    pipe.set(
                        f"{self._prefix}{record_id}",
                        content_hash,
                        nx=True,
                        ex=CLAIM_SECONDS,
                    )
                answers = [bool(answer) for answer in pipe.execute()]
        except self._failure as exc:
            self._outage.failed(exc, GRANTED)
            return [True] * len(keys)
        self._outage.succeeded()
        return answers

    def release(self, ids: list[str]) -> None:
        """Forget the claims of `ids` (deleted records: their next write is a creation).

        Blocking. When Redis fails (a warning, once an outage), the claims lapse after
        CLAIM_SECONDS instead.
        """
        if not ids or self._outage.skip():
            return
        try:
            self._redis.delete(*(f"{self._prefix}{record_id}" for record_id in ids))
        except self._failure as exc:
            self._outage.failed(exc, GRANTED)
        else:
            self._outage.succeeded()
