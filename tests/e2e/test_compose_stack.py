"""docker-compose.yml's stack, run without Docker: the same commands, settings and checks.

There is no Docker engine in CI, so this test reads the api and indexer services and the
Dockerfile, rewrites service host names to 127.0.0.1 and the ports of processes it starts,
and runs: a `chroma run` server, a `redis-server`, the indexer's command, and two API
processes started with the Dockerfile's CMD. Skipped, saying why, without redis-server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import REPO, rpc_call
from tests.deploy.files import (
    container_command,
    dockerfile_env,
    dockerfile_instructions,
    healthcheck_command,
    healthcheck_test,
    load_compose,
    service_environment,
)
from tests.redis_server import require_redis_server, running_redis
from tests.servers import BIN, free_port, start_chroma, stop, wait_for

pytestmark = pytest.mark.slow

LIMIT = 6
#: The operator's environment, as `docker compose up` would read it.
OPERATOR_ENV = {
    "CSTP_AUTH_TOKENS": "alice:alice-token,bob:bob-token,smoke1:smoke-token-1,smoke2:smoke-token-2",
    "CSTP_RATE_LIMITS": f"cstp.queryDecisions={LIMIT}/minute",
}
#: Ports the services listen on inside the compose network.
CONTAINER_PORTS = {"chroma": 8000, "redis": 6379}


@dataclass
class Stack:
    apis: list[str]
    logs: list[Path]
    chroma_port: int
    redis_port: int
    index_output: str


def host_command(argv: list[str]) -> list[str]:
    """A container command run here: `cstp` and `python` from this virtualenv."""
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    local = BIN / argv[0]
    return [str(local) if local.exists() else argv[0], *argv[1:]]


def on_this_host(value: str, ports: dict[str, int]) -> str:
    """`http://chroma:8000` -> `http://127.0.0.1:<port of the chroma started here>`."""
    for service, port in ports.items():
        value = value.replace(f"//{service}:{CONTAINER_PORTS[service]}", f"//127.0.0.1:{port}")
    return value


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    require_redis_server()
    tmp = tmp_path_factory.mktemp("stack")
    compose = load_compose()["services"]
    instructions = dockerfile_instructions()
    chroma_port = free_port()
    chroma = start_chroma(tmp / "chroma", chroma_port, log=tmp / "chroma.log")
    processes: list[subprocess.Popen[bytes]] = [chroma]
    try:
        with running_redis() as redis_uri:
            ports = {"chroma": chroma_port, "redis": int(redis_uri.rsplit(":", 1)[1])}

            def environment(service: str, **overrides: str) -> dict[str, str]:
                declared = service_environment(compose[service], OPERATOR_ENV)
                return {
                    **os.environ,
                    **dockerfile_env(instructions),
                    **{k: on_this_host(v, ports) for k, v in declared.items()},
                    # Container paths do not exist here.
                    "CSTP_DATA_DIR": str(tmp / "data"),
                    **overrides,
                }

            indexer = compose["indexer"]
            mounts = dict(reversed(v.split(":")[:2]) for v in indexer["volumes"])
            argv = [mounts.get(arg, arg) for arg in indexer["command"]]
            index = subprocess.run(
                host_command([str(REPO / a) if a.startswith("./") else a for a in argv]),
                env=environment("indexer"),
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert index.returncode == 0, index.stderr
            apis, logs = [], []
            for n in range(2):
                port, log = free_port(), tmp / f"api-{n}.log"
                env = environment("api", CSTP_HOST="127.0.0.1", CSTP_PORT=str(port))
                process = subprocess.Popen(
                    host_command(container_command(instructions)),
                    env=env,
                    stdout=log.open("wb"),
                    stderr=subprocess.STDOUT,
                )
                processes.append(process)
                wait_for(f"http://127.0.0.1:{port}/health", process, seconds=300)
                apis.append(f"http://127.0.0.1:{port}")
                logs.append(log)
            yield Stack(apis, logs, ports["chroma"], ports["redis"], index.stderr)
            for process in processes[1:]:
                stop(process)
    finally:
        for process in processes:
            stop(process)


def call(base_url: str, token: str, params: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(
        f"{base_url}/cstp",
        json=rpc_call("cstp.queryDecisions", params),
        headers={"authorization": f"Bearer {token}", **headers},
        timeout=60,
        verify=False,  # plain HTTP; spares httpx loading the CA bundle per call
    )


def metric(base_url: str, name: str, **labels: str) -> float:
    text = httpx.get(f"{base_url}/metrics", timeout=30).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


def test_indexer_service_indexes_the_mounted_examples_into_the_chroma_server(
    stack: Stack,
) -> None:
    assert "48 new, 0 updated, 0 unchanged, 0 failed" in stack.index_output
    assert f"127.0.0.1:{stack.chroma_port}" in stack.index_output
    assert [metric(url, "cstp_decisions") for url in stack.apis] == [48, 48]


@pytest.mark.parametrize(
    "params",
    [
        {"query": "avoid floating point rounding errors in invoice totals", "limit": 5},
        {"query": "message broker for billing events", "filters": {"stakes": ["high"]}},
    ],
    ids=["plain", "filtered"],
)
def test_both_api_processes_give_the_same_ids_and_distances(
    stack: Stack, params: dict[str, Any]
) -> None:
    answers = [call(url, "alice-token", params).json()["result"] for url in stack.apis]
    ranked = [[(d["id"], d["distance"]) for d in a["decisions"]] for a in answers]
    assert ranked[0] and ranked[0] == ranked[1]


def test_limits_are_shared_through_redis_exactly_across_both_processes(stack: Stack) -> None:
    # Agent bob is used only here; the calls alternate between the two processes.
    token = "bob-token"
    before = sum(
        metric(u, "cstp_rate_limited_total", method="cstp.queryDecisions") for u in stack.apis
    )
    codes = [
        call(stack.apis[i % 2], token, {"query": f"limit {i}"}).json().get("error", {}).get("code")
        for i in range(LIMIT + 3)
    ]
    after = sum(
        metric(u, "cstp_rate_limited_total", method="cstp.queryDecisions") for u in stack.apis
    )
    assert codes == [None] * LIMIT + [-32002] * 3
    assert after - before == 3


@pytest.mark.parametrize("n", [0, 1], ids=["first-api", "second-api"])
def test_smoke_script_passes_against_each_api_process(stack: Stack, n: int) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed; scripts/smoke.sh needs it (.ci/run installs it)")
    result = subprocess.run(
        ["sh", str(REPO / "scripts" / "smoke.sh"), stack.apis[n], f"smoke-token-{n + 1}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("\nok ") + result.stdout.startswith("ok ") == 8


def test_compose_healthchecks_pass_against_the_running_services(stack: Stack) -> None:
    compose = load_compose()["services"]
    chroma = healthcheck_test(compose["chroma"], {})
    chroma = [part.replace("/8000", f"/{stack.chroma_port}") for part in chroma]
    redis = healthcheck_test(compose["redis"], {})
    redis = [redis[0], "-p", str(stack.redis_port), *redis[1:]]
    api_port = stack.apis[0].rsplit(":", 1)[1]
    api = [
        part.replace("127.0.0.1:8000", f"127.0.0.1:{api_port}")
        for part in healthcheck_test(compose["api"], {})
    ]
    image = [
        part.replace("127.0.0.1:8000", f"127.0.0.1:{api_port}")
        for part in healthcheck_command(dockerfile_instructions())
    ]
    for argv in (chroma, redis, api, image):
        assert subprocess.run(host_command(argv), capture_output=True, timeout=30).returncode == 0


def test_chroma_healthcheck_fails_when_nothing_answers() -> None:
    compose = load_compose()["services"]
    argv = [p.replace("/8000", f"/{free_port()}") for p in healthcheck_test(compose["chroma"], {})]
    assert subprocess.run(argv, capture_output=True, timeout=30).returncode != 0


def test_each_call_is_one_json_log_line_carrying_the_request_id(stack: Stack) -> None:
    response = call(stack.apis[1], "alice-token", {"query": "kafka"}, **{"x-request-id": "stack-1"})
    assert response.headers["x-request-id"] == "stack-1"
    # The line is written once the response is sent; a later call on the same process
    # has been answered after it, so the line is in the file by then.
    call(stack.apis[1], "alice-token", {"query": "kafka"})
    lines = [
        json.loads(line) for line in stack.logs[1].read_text().splitlines() if line.startswith("{")
    ]
    mine = [line for line in lines if line.get("request_id") == "stack-1"]
    assert len(mine) == 1
    assert {k: mine[0][k] for k in ("logger", "agent", "method", "code", "status")} == {
        "logger": "a2a.access",
        "agent": "alice",
        "method": "cstp.queryDecisions",
        "code": "ok",
        "status": 200,
    }
    assert isinstance(mine[0]["ms"], float) and re.fullmatch(r"\S+Z", mine[0]["time"])
