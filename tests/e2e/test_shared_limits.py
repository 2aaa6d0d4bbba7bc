"""Two real `cstp serve` processes sharing one Redis hold one limit per agent.

Starts an ephemeral redis-server and two servers on free ports; skipped, saying why, when
redis-server is not installed (CI installs it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import rpc_call
from tests.redis_server import require_redis_server, running_redis
from tests.servers import free_port, start_cstp, stop

pytestmark = pytest.mark.slow

LIMIT = 6


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    require_redis_server()
    with running_redis() as redis_uri:
        env = {
            "CSTP_RATE_LIMIT_STORAGE": redis_uri,
            "CSTP_AUTH_TOKENS": "alice:alice-token-1,bob:bob-token-2",
            "CSTP_RATE_LIMITS": f"cstp.queryDecisions={LIMIT}/minute",
            "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
        }
        ports, processes = [free_port(), free_port()], []
        try:
            for port in ports:
                data_dir: Path = tmp_path_factory.mktemp(f"store-{port}")
                processes.append(start_cstp(port, {**env, "CSTP_DATA_DIR": str(data_dir)}))
            yield [f"http://127.0.0.1:{port}" for port in ports]
        finally:
            for process in processes:
                stop(process)


def call(base_url: str, token: str, id: int) -> httpx.Response:
    body = rpc_call("cstp.queryDecisions", {"query": "event bus"}, id)
    return httpx.post(
        f"{base_url}/cstp",
        json=body,
        headers={"authorization": f"Bearer {token}"},
        timeout=30,
        verify=False,  # plain HTTP; spares httpx loading the CA bundle per call
    )


def code(response: httpx.Response) -> Any:
    return response.json().get("error", {}).get("code")


def test_agent_alternating_between_processes_is_limited_at_the_same_count(
    servers: list[str],
) -> None:
    responses = [call(servers[i % 2], "alice-token-1", i) for i in range(LIMIT + 3)]
    assert [code(r) for r in responses] == [None] * LIMIT + [-32002] * 3
    remaining = [int(r.headers["x-ratelimit-remaining"]) for r in responses[:LIMIT]]
    assert remaining == list(range(LIMIT - 1, -1, -1))
    assert all(int(r.headers["retry-after"]) >= 1 for r in responses[LIMIT:])


def test_another_agent_is_unaffected_on_either_process(servers: list[str]) -> None:
    assert [code(call(url, "bob-token-2", 1)) for url in servers] == [None, None]


def test_unknown_token_is_refused_by_both_processes(servers: list[str]) -> None:
    assert [call(url, "mallory", 1).status_code for url in servers] == [401, 401]
