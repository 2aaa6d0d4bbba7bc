"""The deployment files read as Docker and Compose read them: instructions, services, `${VAR}`."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO

DOCKERFILE = REPO / "Dockerfile"
COMPOSE_FILE = REPO / "docker-compose.yml"
DOCKERIGNORE = REPO / ".dockerignore"

_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-?])?(?P<arg>[^}]*)\}"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


def dockerfile_instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: comments dropped, continuation lines joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, rest = (pending + line).partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        pending = ""
    return instructions


def exec_form(arguments: str) -> list[str]:
    """A CMD/ENTRYPOINT/HEALTHCHECK CMD in exec (JSON array) form; raises on shell form."""
    value = json.loads(arguments)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), arguments
    return value


def last(instructions: list[tuple[str, str]], keyword: str) -> str | None:
    """The arguments of the last `keyword` instruction (the one Docker uses), or None."""
    found = [rest for name, rest in instructions if name == keyword]
    return found[-1] if found else None


def container_command(instructions: list[tuple[str, str]]) -> list[str]:
    """What the container runs: ENTRYPOINT followed by CMD, both in exec form."""
    entrypoint, cmd = last(instructions, "ENTRYPOINT"), last(instructions, "CMD")
    return (exec_form(entrypoint) if entrypoint else []) + (exec_form(cmd) if cmd else [])


def dockerfile_env(instructions: list[tuple[str, str]]) -> dict[str, str]:
    """The image's environment from every `ENV KEY=VALUE ...` instruction."""
    env: dict[str, str] = {}
    for name, rest in instructions:
        if name == "ENV":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def healthcheck_command(instructions: list[tuple[str, str]]) -> list[str]:
    """The HEALTHCHECK's command, exec form, options (`--interval=...`) dropped."""
    rest = last(instructions, "HEALTHCHECK") or ""
    _, _, command = rest.partition("CMD ")
    return exec_form(command)


def load_compose(path: Path = COMPOSE_FILE) -> dict[str, Any]:
    """The compose file as YAML (anchors and `<<` merges resolved)."""
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """Compose variable interpolation: `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-d}`,
    `${VAR:?message}`, `${VAR?message}`. Raises KeyError(message) for a required variable.
    """

    def substitute(match: re.Match[str]) -> str:
        if match["escaped"]:
            return "$"
        name = match["braced"] or match["bare"]
        value, op, arg = env.get(name), match["op"] or "", match["arg"]
        unset_or_empty = value is None or (op.startswith(":") and value == "")
        if op.endswith("?") and unset_or_empty:
            raise KeyError(f"{name}: {arg}")
        if op.endswith("-") and unset_or_empty:
            return arg
        return value or ""

    return _VARIABLE.sub(substitute, text)


def service_environment(service: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """A service's `environment` (mapping or `KEY=VALUE` list), interpolated with `env`."""
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        raw = dict(item.partition("=")[::2] for item in raw)
    return {key: interpolate(str(value), env) for key, value in raw.items()}


def healthcheck_test(service: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """A compose healthcheck `test` as argv: `CMD` form as is, `CMD-SHELL` through sh -c."""
    test = service["healthcheck"]["test"]
    if isinstance(test, str):
        test = ["CMD-SHELL", test]
    kind, *argv = (interpolate(part, env) for part in test)
    return argv if kind == "CMD" else ["sh", "-c", " ".join(argv)]
