"""The Dockerfile, .dockerignore and docker-compose.yml, checked as files (no Docker here).

The stack they describe is run without Docker in tests/e2e/test_compose_stack.py.
"""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest

from tests.deploy.files import (
    DOCKERIGNORE,
    container_command,
    dockerfile_env,
    dockerfile_instructions,
    healthcheck_command,
    interpolate,
    last,
    load_compose,
    service_environment,
)

#: What the image runs; tests/e2e/test_compose_stack.py starts its API processes with it.
EXPECTED_COMMAND = ["cstp", "serve"]


@pytest.fixture(scope="module")
def instructions() -> list[tuple[str, str]]:
    return dockerfile_instructions()


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, object]]:
    compose = load_compose()
    return compose["services"]  # type: ignore[no-any-return]


def test_base_image_is_python_311_slim_pinned_to_a_patch_release(
    instructions: list[tuple[str, str]],
) -> None:
    base = [rest for name, rest in instructions if name == "FROM"]
    assert len(base) == 1
    assert re.fullmatch(r"python:3\.11\.\d+-slim(-[a-z]+)?", base[0]), base[0]


def test_dependencies_are_installed_before_the_code_is_copied(
    instructions: list[tuple[str, str]],
) -> None:
    steps = [f"{name} {rest}" for name, rest in instructions]
    copy_pyproject = next(i for i, s in enumerate(steps) if s.startswith("COPY pyproject.toml"))
    install_deps = next(i for i, s in enumerate(steps) if "pip install -r" in s)
    copy_code = next(i for i, s in enumerate(steps) if s.startswith("COPY a2a"))
    install_code = next(i for i, s in enumerate(steps) if "pip install --no-deps ." in s)
    assert copy_pyproject < install_deps < copy_code < install_code


def test_container_runs_as_a_non_root_user(instructions: list[tuple[str, str]]) -> None:
    user = last(instructions, "USER")
    assert user is not None and user.split(":")[0] not in ("root", "0")


def test_image_runs_cstp_serve_on_all_interfaces_port_8000_with_json_logs(
    instructions: list[tuple[str, str]],
) -> None:
    env = dockerfile_env(instructions)
    assert container_command(instructions) == EXPECTED_COMMAND
    assert (env["CSTP_HOST"], env["CSTP_PORT"], env["CSTP_LOG_FORMAT"]) == (
        "0.0.0.0",
        "8000",
        "json",
    )
    assert last(instructions, "EXPOSE") == "8000"


def test_image_never_downloads_at_run_time(instructions: list[tuple[str, str]]) -> None:
    env = dockerfile_env(instructions)
    assert env["ANONYMIZED_TELEMETRY"] == "False"
    assert env["HF_HUB_OFFLINE"] == "1"
    # The default model is loaded once at build time with the network switched off.
    assert any(name == "RUN" and rest.startswith("--network=none") for name, rest in instructions)


def test_healthcheck_asks_health_with_python_not_curl(
    instructions: list[tuple[str, str]],
) -> None:
    command = healthcheck_command(instructions)
    assert command[:2] == ["python", "-c"]
    assert "http://127.0.0.1:8000/health" in command[2]


def test_dockerignore_keeps_local_state_and_secrets_out_of_the_build() -> None:
    ignored = {line.strip() for line in DOCKERIGNORE.read_text().splitlines()}
    assert {".git", ".venv", "var", "tests"} <= ignored


def test_every_service_declares_a_healthcheck_and_the_one_shot_indexer_disables_it(
    services: dict[str, dict[str, object]],
) -> None:
    assert set(services) == {"api", "chroma", "redis", "indexer"}
    for name, service in services.items():
        assert "healthcheck" in service, name
        running = "profiles" not in service
        assert bool(service["healthcheck"].get("test")) is running, name  # type: ignore[attr-defined]
    assert services["indexer"]["healthcheck"] == {"disable": True}


def test_services_wait_for_healthy_dependencies(
    services: dict[str, dict[str, object]],
) -> None:
    for name, service in services.items():
        for dependency, rule in (service.get("depends_on") or {}).items():  # type: ignore[attr-defined]
            assert rule == {"condition": "service_healthy"}, (name, dependency)
    assert set(services["api"]["depends_on"]) == {"chroma", "redis"}  # type: ignore[arg-type]


def test_chroma_image_is_the_installed_chromadb_client_version(
    services: dict[str, dict[str, object]],
) -> None:
    assert services["chroma"]["image"] == f"chromadb/chroma:{version('chromadb')}"
    assert services["chroma"]["volumes"] == ["chroma-data:/data"]


def test_redis_image_is_pinned_and_checked_with_redis_cli_ping(
    services: dict[str, dict[str, object]],
) -> None:
    assert re.fullmatch(r"redis:\d+\.\d+\.\d+(-[a-z]+)?", str(services["redis"]["image"]))
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]  # type: ignore[index]


def test_api_publishes_a_port_range_so_replicas_do_not_clash(
    services: dict[str, dict[str, object]],
) -> None:
    (mapping,) = services["api"]["ports"]  # type: ignore[misc]
    published, _, container = interpolate(mapping, {}).rpartition(":")
    assert container == "8000" and re.fullmatch(r"\d+-\d+", published)


def test_api_takes_secrets_and_addresses_only_from_the_environment(
    services: dict[str, dict[str, object]],
) -> None:
    env = service_environment(services["api"], {"CSTP_AUTH_TOKENS": "a:t"})
    assert env["CSTP_CHROMA_URL"] == "http://chroma:8000"
    assert env["CSTP_RATE_LIMIT_STORAGE"] == "redis://redis:6379/0"
    assert env["CSTP_AUTH_TOKENS"] == "a:t"
    with pytest.raises(KeyError, match="CSTP_AUTH_TOKENS"):
        service_environment(services["api"], {})


def test_indexer_is_a_one_shot_under_a_profile_with_the_examples_mounted(
    services: dict[str, dict[str, object]],
) -> None:
    indexer = services["indexer"]
    assert indexer["profiles"] == ["tools"]
    assert indexer["command"] == ["cstp", "index", "/data/decisions"]
    assert indexer["volumes"] == ["./examples/decisions:/data/decisions:ro"]
    assert indexer["image"] == services["api"]["image"]


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("${A}", {"A": "1"}, "1"),
        ("${A:-x}", {"A": ""}, "x"),
        ("${A-x}", {"A": ""}, ""),
        ("${A:-x}", {}, "x"),
        ("$$line", {}, "$line"),
        ("$A/b", {"A": "a"}, "a/b"),
    ],
    ids=[
        "braced",
        "default-when-empty",
        "default-only-when-unset",
        "default-when-unset",
        "escaped-dollar",
        "bare",
    ],
)
def test_interpolation_follows_compose_rules(text: str, env: dict[str, str], expected: str) -> None:
    assert interpolate(text, env) == expected
