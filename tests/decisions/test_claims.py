"""Creation claims in a real Redis: the first claim of an id wins; Redis away grants all."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from a2a.decisions.claims import CreationClaims
from tests.redis_server import running_redis
from tests.servers import free_port


def test_the_first_claim_wins_until_it_is_released() -> None:
    with running_redis() as uri:
        claims = CreationClaims.from_uri(uri, "decisions")
        assert claims is not None
        assert claims.claim([("a", "h1"), ("b", "h2")]) == [True, True]
        assert claims.claim([("a", "h1"), ("c", "h3")]) == [False, True]
        claims.release(["a"])
        assert claims.claim([("a", "h1")]) == [True]
        other = CreationClaims.from_uri(uri, "other-collection")
        assert other is not None and other.claim([("a", "h1")]) == [True]


def test_redis_away_grants_every_claim_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    claims = CreationClaims.from_uri(f"redis://127.0.0.1:{free_port()}", "decisions")
    assert claims is not None
    with caplog.at_level(logging.WARNING, logger="a2a.limits.outage"):
        assert claims.claim([("a", "h1"), ("b", "h2")]) == [True, True]
        claims.release(["a"])
        assert claims.claim([("c", "h3")]) == [True]  # skipped: Redis is away
    assert caplog.text.count("creation claims' Redis unreachable") == 1
    assert "every creation claim granted" in caplog.text


def test_a_uri_that_is_not_redis_makes_no_claims() -> None:
    assert CreationClaims.from_uri("memory://", "decisions") is None


def test_a_unix_socket_redis_holds_claims(tmp_path: Path) -> None:
    """Reported: `redis+unix://` (a scheme the settings accept) made no claims, silently."""
    with running_redis(unix_socket=tmp_path / "redis.sock") as uri:
        assert uri.startswith("redis+unix://")
        claims = CreationClaims.from_uri(uri, "decisions")
        assert claims is not None
        assert claims.claim([("a", "h1")]) == [True]
        assert claims.claim([("a", "h1")]) == [False]
