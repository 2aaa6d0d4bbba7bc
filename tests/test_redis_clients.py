"""Redis clients built in one place from CSTP_RATE_LIMIT_STORAGE."""

from __future__ import annotations

import pytest

from a2a.redis_clients import REDIS_TIMEOUT_SECONDS, async_redis, blocking_redis, redis_url


def test_redis_urls_of_the_storage_settings() -> None:
    assert redis_url("redis://h:6379/0") == "redis://h:6379/0"
    assert redis_url("rediss://h:6380/1") == "rediss://h:6380/1"
    assert redis_url("redis+unix:///run/redis.sock") == "unix:///run/redis.sock"
    assert redis_url("memory://") is None


@pytest.mark.parametrize("uri", ["memory://", "memory:///"], ids=["memory", "memory-with-path"])
def test_a_storage_that_is_not_redis_has_no_client(uri: str) -> None:
    assert blocking_redis(uri) is None
    assert async_redis(uri) is None


async def test_every_client_bounds_its_commands_and_connections() -> None:
    blocking = blocking_redis("redis+unix:///run/redis.sock")
    shared = async_redis("redis://h:6379/0")
    assert blocking is not None and shared is not None
    for options in (
        blocking.connection_pool.connection_kwargs,
        shared.connection_pool.connection_kwargs,
    ):
        assert options["socket_timeout"] == REDIS_TIMEOUT_SECONDS
        assert options["socket_connect_timeout"] == REDIS_TIMEOUT_SECONDS
    assert blocking.connection_pool.connection_kwargs["path"] == "/run/redis.sock"
    blocking.close()
    await shared.aclose()
