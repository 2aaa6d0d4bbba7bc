"""Creation claims in a real Redis: the first claim of an id wins; Redis away grants all."""

from __future__ import annotations

import logging

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
    with caplog.at_level(logging.WARNING, logger="a2a.decisions.claims"):
        assert claims.claim([("a", "h1"), ("b", "h2")]) == [True, True]
        claims.release(["a"])
    assert "granting 2 claims" in caplog.text


def test_a_uri_that_is_not_redis_makes_no_claims() -> None:
    assert CreationClaims.from_uri("memory://", "decisions") is None
