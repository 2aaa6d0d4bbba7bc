"""Bearer-token auth on POST /cstp (CONTRACT.md sections Transport, Errors specific to CSTP)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from a2a.auth.scopes import allows
from a2a.auth.tokens import (
    TokenEntry,
    TokenTable,
    load_token_table,
    parse_entries,
    parse_env_tokens,
    read_token_file,
)
from a2a.cli import exit_codes
from a2a.cli.main import app as cli_app
from a2a.embeddings import Embedder
from a2a.errors import TokenFormatError
from a2a.http.identify import bearer_token
from a2a.settings import Settings, load_settings
from a2a.tenants.grants import DEFAULT_ONLY, EVERY, Grant
from tests.conftest import app_client, rpc_call

TOKENS = "alice:alice-token-1,bob:bob-token-2"
DISCOVER = rpc_call("rpc.discover")


def auth_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(data_dir=tmp_path / "data", agent_id="test-agent", **overrides)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"authorization": "Basic YWxpY2U6YWxpY2UtdG9rZW4tMQ=="},
        bearer("not-a-known-token"),
        {"authorization": "Bearer "},
        {"authorization": "Bearer"},
        {"authorization": "alice-token-1"},
        bearer("alice-token-1 extra"),
        bearer("alice-token-1x"),
    ],
    ids=[
        "no-header",
        "basic-scheme",
        "unknown-token",
        "empty-token",
        "scheme-only",
        "no-scheme",
        "two-words",
        "token-prefix-match",
    ],
)
async def test_missing_malformed_or_unknown_token_is_401_with_jsonrpc_error(
    tmp_path: Path, embedder: Embedder, headers: dict[str, str]
) -> None:
    async with app_client(auth_settings(tmp_path, auth_tokens=TOKENS), embedder) as client:
        response = await client.post("/cstp", json=DISCOVER, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32001, "message": body["error"]["message"]},
    }


async def test_known_token_is_served_as_its_agent(tmp_path: Path, embedder: Embedder) -> None:
    async with app_client(auth_settings(tmp_path, auth_tokens=TOKENS), embedder) as client:
        for token in ("alice-token-1", "bob-token-2"):
            response = await client.post("/cstp", json=DISCOVER, headers=bearer(token))
            assert response.status_code == 200
            assert "result" in response.json()
        lower = await client.post(
            "/cstp", json=DISCOVER, headers={"authorization": "bearer bob-token-2"}
        )
    assert lower.status_code == 200


async def test_auth_is_checked_before_the_size_cap_and_parsing(
    tmp_path: Path, embedder: Embedder
) -> None:
    async with app_client(auth_settings(tmp_path, auth_tokens=TOKENS), embedder) as client:
        oversized = await client.post("/cstp", content=b"[" * 2_000_000)
        garbage = await client.post("/cstp", content=b"{not json")
        authorized = await client.post(
            "/cstp", content=b"[" * 2_000_000, headers=bearer("alice-token-1")
        )
    assert oversized.status_code == 401 and garbage.status_code == 401
    assert authorized.status_code == 413


@pytest.mark.parametrize(
    "path",
    ["/health", "/ready", "/.well-known/agent-card.json", "/.well-known/agent.json"],
    ids=["health", "ready", "agent-card", "agent-card-legacy"],
)
@pytest.mark.parametrize("headers", [{}, bearer("wrong")], ids=["no-token", "wrong-token"])
async def test_health_ready_and_agent_card_need_no_token(
    tmp_path: Path, embedder: Embedder, path: str, headers: dict[str, str]
) -> None:
    async with app_client(auth_settings(tmp_path, auth_tokens=TOKENS), embedder) as client:
        response = await client.get(path, headers=headers)
    assert response.status_code == 200


async def test_tokens_file_with_comments_adds_agents(tmp_path: Path, embedder: Embedder) -> None:
    secrets = tmp_path / "tokens"
    secrets.write_text("# agents of the ops team\n\ncarol:carol-token-3\n  # rotated 2026-01\n")
    settings = auth_settings(tmp_path, auth_tokens=TOKENS, auth_tokens_file=secrets)
    async with app_client(settings, embedder) as client:
        carol = await client.post("/cstp", json=DISCOVER, headers=bearer("carol-token-3"))
        alice = await client.post("/cstp", json=DISCOVER, headers=bearer("alice-token-1"))
    assert carol.status_code == 200 and alice.status_code == 200


async def test_without_tokens_the_service_runs_open_and_warns(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="a2a.http.app"):
        async with app_client(auth_settings(tmp_path), embedder) as client:
            response = await client.post("/cstp", json=DISCOVER)
    assert response.status_code == 200
    assert [r for r in caplog.records if r.name == "a2a.http.app" and r.levelno == logging.WARNING]


def test_tokens_come_from_the_environment_and_are_never_shown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CSTP_AUTH_TOKENS", TOKENS)
    settings = load_settings(data_dir=tmp_path)
    assert settings.auth_tokens is not None
    assert settings.auth_tokens.get_secret_value() == TOKENS
    assert "alice-token-1" not in repr(settings) and "alice-token-1" not in str(settings)


@pytest.mark.parametrize(
    "value",
    ["alice-secret-token", "alice:", ":secret-token", "al ice:secret-token", "alice:secret token"],
    ids=["no-colon", "no-token", "no-agent", "space-in-agent", "space-in-token"],
)
def test_bad_token_entries_fail_start_up_naming_the_setting_not_the_token(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CSTP_AUTH_TOKENS", f"bob:bob-token-2,{value}")
    with pytest.raises(TokenFormatError) as raised:
        load_token_table(load_settings())
    assert "CSTP_AUTH_TOKENS" in str(raised.value)
    assert "secret" not in str(raised.value) and "bob-token-2" not in str(raised.value)


def test_the_cli_refuses_bad_tokens_before_it_opens_anything(tmp_path: Path) -> None:
    # Settings is a leaf and does not parse tokens; `cstp` checks them with the settings.
    env = {"CSTP_AUTH_TOKENS": "alice-secret-token", "CSTP_DATA_DIR": str(tmp_path)}
    result = CliRunner().invoke(cli_app, ["index", str(tmp_path)], env=env)
    assert result.exit_code == exit_codes.SETTINGS
    assert "CSTP_AUTH_TOKENS" in result.output and "secret" not in result.output
    assert not (tmp_path / "chroma").exists()


def test_unreadable_tokens_file_fails_start_up_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(TokenFormatError) as raised:
        load_token_table(load_settings(auth_tokens_file=tmp_path / "missing"))
    assert "CSTP_AUTH_TOKENS_FILE" in str(raised.value)


def test_one_token_for_two_agents_is_refused() -> None:
    with pytest.raises(TokenFormatError) as raised:
        TokenTable([TokenEntry("alice", "shared-token"), TokenEntry("bob", "shared-token")])
    assert "shared-token" not in str(raised.value)


def test_token_table_maps_each_token_to_its_agent() -> None:
    table = TokenTable(parse_entries(["alice:t-1", "bob:t-2", "alice:t-3"], "entry"))
    assert [table.agent_for(t) for t in ("t-1", "t-2", "t-3")] == ["alice", "bob", "alice"]
    assert [table.agent_for(t) for t in ("t-", "t-10", "", None)] == [None, None, None, None]
    assert table.agents == {"alice", "bob"} and len(table) == 3


def test_token_file_format(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# comment\nalice : t-1\n\n#bob:t-2\nbob:t-3\n")
    assert read_token_file(path) == [TokenEntry("alice", "t-1"), TokenEntry("bob", "t-3")]


@pytest.mark.parametrize(
    ("headers", "token"),
    [
        ([(b"authorization", b"Bearer abc")], "abc"),
        ([(b"authorization", b"BEARER abc")], "abc"),
        ([(b"authorization", b"Bearer  abc ")], "abc"),
        ([(b"authorization", b"Bearer a b")], None),
        ([(b"authorization", b"Bearer abc"), (b"authorization", b"Bearer abc")], None),
        ([(b"authorization", b"Token abc")], None),
        ([], None),
    ],
    ids=[
        "plain",
        "scheme-case",
        "extra-spaces",
        "inner-space",
        "two-headers",
        "other-scheme",
        "none",
    ],
)
def test_bearer_token_reading(headers: list[tuple[bytes, bytes]], token: str | None) -> None:
    assert bearer_token(headers) == token


async def test_unauthorized_response_is_the_same_for_any_method(
    tmp_path: Path, embedder: Embedder
) -> None:
    async with app_client(auth_settings(tmp_path, auth_tokens=TOKENS), embedder) as client:
        get = await client.get("/cstp")
        batch = await client.post("/cstp", json=[DISCOVER, DISCOVER])
    assert get.status_code == 401 and batch.status_code == 401


def test_scopes_are_a_third_part_joined_by_plus_and_default_to_read() -> None:
    entries = parse_entries(
        ["planner:tok-1:read+write", "auditor:tok-2", "writer:tok-3:write"], "entry"
    )
    assert [(e.agent, sorted(e.scopes)) for e in entries] == [
        ("planner", ["read", "write"]),
        ("auditor", ["read"]),
        ("writer", ["write"]),
    ]
    table = TokenTable(entries)
    assert table.lookup("tok-1") == ("planner", frozenset({"read", "write"}), DEFAULT_ONLY)
    assert table.lookup("tok-2") == ("auditor", frozenset({"read"}), DEFAULT_ONLY)


def test_tokens_file_takes_scopes_one_entry_per_line(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# agents\nplanner:t-1:read+write\nauditor:t-2\n")
    assert read_token_file(path) == [
        TokenEntry("planner", "t-1", frozenset({"read", "write"})),
        TokenEntry("auditor", "t-2"),
    ]


def test_admin_scope_is_parsed_and_covers_write_and_read() -> None:
    entries = parse_env_tokens(SecretStr("root:t-3:admin"))
    assert entries == [TokenEntry("root", "t-3", frozenset({"admin"}))]
    granted = entries[0].scopes
    assert [allows(granted, s) for s in ("read", "write", "admin")] == [True, True, True]
    assert allows(frozenset({"write"}), "admin") is False


@pytest.mark.parametrize(
    "value",
    ["alice:secret-token:root", "alice:secret-token:read+", "alice:secret-token:read+root"],
)
def test_unknown_scopes_fail_start_up_naming_the_setting_not_the_token(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CSTP_AUTH_TOKENS", value)
    with pytest.raises(TokenFormatError) as raised:
        load_token_table(load_settings())
    assert "CSTP_AUTH_TOKENS" in str(raised.value) and "secret" not in str(raised.value)


@pytest.mark.parametrize(
    ("text", "grant"),
    [
        ("", Grant()),
        ("acme", Grant(frozenset({"acme"}))),
        ("acme|globex", Grant(frozenset({"acme", "globex"}))),
        ("*", EVERY),
    ],
)
def test_a_fourth_part_grants_tenants(text: str, grant: Grant) -> None:
    (entry,) = parse_env_tokens(SecretStr(f"cto:tok-0123456789:read:{text}"))
    assert entry.tenants == grant


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Acme", "must match"),
        ("acme|", "must match"),
        ("*|acme", "'*' (every tenant) stands alone"),
    ],
)
def test_a_bad_fourth_part_names_the_entry_and_why(text: str, reason: str) -> None:
    with pytest.raises(TokenFormatError) as refused:
        parse_env_tokens(SecretStr(f"cto:tok-0123456789:read:{text}"))
    assert "entry 1 (agent cto)" in str(refused.value) and reason in str(refused.value)
    assert "tok-0123456789" not in str(refused.value)
