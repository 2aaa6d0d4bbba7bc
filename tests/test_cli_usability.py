"""The rough edges a new user hit in the `cstp` command: help, exit codes, query, progress."""

from __future__ import annotations

import json
import logging
import re
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from a2a.cli import exit_codes
from a2a.cli.decisions import record_lines
from a2a.cli.indexing import ProgressLog
from a2a.cli.main import app
from a2a.cli.query import default_url
from a2a.settings import load_settings
from tests.conftest import EXAMPLES_TOKENS, REPO
from tests.servers import cstp, free_port, output_of, start_cstp, stop

EXAMPLES = str(REPO / "examples" / "decisions")
TOKEN = EXAMPLES_TOKENS["cli"]
FAST = "wordllama-l2-supercat-256"
COMMANDS = sorted(
    [c.name or c.callback.__name__ for c in app.registered_commands if c.callback]
    + [g.name for g in app.registered_groups if g.name]  # `cstp guardrails check|test`
)
RUNNER = CliRunner()
#: typer's rendering of Python annotations: `<list[Path]>`, `<bool>`, `<int range>`.
TYPE_HINT = re.compile(r"<[a-zA-Z_][^>\n]*>")


def help_page(*command: str, width: int = 100) -> str:
    """`cstp COMMAND --help` as printed on a terminal `width` columns wide."""
    result = RUNNER.invoke(app, [*command, "--help"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


def test_top_help_lists_every_command_with_a_description() -> None:
    output = help_page()
    listed = dict(re.findall(r"^  (\w+)\s{2,}(\S.*)$", output.split("Commands:")[1], re.MULTILINE))
    assert sorted(listed) == COMMANDS
    assert all(not line.endswith("...") for line in listed.values()), listed


@pytest.mark.parametrize("command", [[], *[[c] for c in COMMANDS]], ids=["cstp", *COMMANDS])
def test_help_shows_no_python_type_hints(command: list[str]) -> None:
    assert TYPE_HINT.findall(help_page(*command)) == []


def test_serve_help_names_every_door() -> None:
    output = help_page("serve", width=200)
    for door in ("/cstp", "/mcp", "/console", "/health", "/ready", "/metrics"):
        assert door in output


def test_query_help_offers_every_filter_and_mode() -> None:
    output = help_page("query", width=200)
    for option in (
        "--category", "--min-confidence", "--max-confidence", "--date-after", "--date-before",
        "--stakes", "--status", "--mode", "--max-distance", "--limit", "--reasons", "--json",
        "--url", "--token",
    ):  # fmt: skip
        assert option in output


def test_exit_codes_are_distinct() -> None:
    codes = [v for k, v in vars(exit_codes).items() if k.isupper()]
    assert len(codes) == len(set(codes))


def test_port_in_use_exits_4_before_the_store_is_opened(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cstp(
            "serve", "--host", "127.0.0.1", "--port", str(port),
            env={"CSTP_DATA_DIR": str(tmp_path / "data")},
        )  # fmt: skip
    assert result.returncode == exit_codes.ADDRESS == 4
    assert str(port) in result.stderr
    assert not (tmp_path / "data" / "chroma").exists()


def test_query_of_a_service_that_is_not_there_exits_5() -> None:
    result = RUNNER.invoke(app, ["query", "anything"], env={"CSTP_PORT": str(free_port())})
    assert result.exit_code == exit_codes.UNREACHABLE == 5, result.output


@pytest.mark.parametrize(
    "command",
    [["get", "x"], ["list"], ["calibration"], ["review", "x", "--outcome", "success"]],
)
def test_decision_commands_exit_5_when_the_service_is_not_there(command: list[str]) -> None:
    """Reported: `cstp list` of a service that is not there exited 1, `cstp query` 5; the
    README's exit codes are the same for every command. They also go where `cstp query`
    goes: the address `cstp serve` binds with the same CSTP_HOST/CSTP_PORT."""
    port = str(free_port())
    result = RUNNER.invoke(app, command, env={"CSTP_URL": None, "CSTP_PORT": port})
    assert result.exit_code == exit_codes.UNREACHABLE == 5, result.output
    assert f"127.0.0.1:{port}" in result.output


def test_query_with_an_unknown_mode_is_a_usage_error() -> None:
    result = RUNNER.invoke(app, ["query", "anything", "--mode", "fuzzy"])
    assert result.exit_code == exit_codes.SETTINGS == 2


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8123"),
        ("0.0.0.0", "http://127.0.0.1:8123"),
        ("::", "http://[::1]:8123"),
        ("::1", "http://[::1]:8123"),
        ("cstp.internal", "http://cstp.internal:8123"),
    ],
    ids=["loopback", "any-ipv4", "any-ipv6", "ipv6", "name"],
)
def test_default_url_is_where_serve_binds(host: str, url: str) -> None:
    assert default_url(load_settings(host=host, port=8123)) == url


def test_index_progress_prints_the_bar_and_the_summary(tmp_path: Path) -> None:
    env = {"CSTP_DATA_DIR": str(tmp_path), "CSTP_EMBEDDING_MODEL": FAST}
    result = cstp("index", "--progress", EXAMPLES, env=env)
    assert result.returncode == 0, result.stderr
    assert re.search(r"indexing .* (\d+)/\1", result.stderr), result.stderr
    assert re.search(r"indexed into .*: \d+ new, 0 updated", result.stderr)


@pytest.fixture
def port(examples_service: str) -> int:
    """The port of the session's real `cstp serve` with auth on over the example decisions."""
    return int(examples_service.rsplit(":", 1)[1])


@pytest.mark.slow
def test_query_honours_cstp_port_and_sends_every_filter(port: int) -> None:
    result = cstp(
        "query", "database migration", "--json", "--stakes", "high", "--stakes", "critical",
        "--min-confidence", "0.5", "--max-confidence", "0.95", "--date-after", "2024-01-01",
        "--date-before", "2025-12-31", "--status", "reviewed", "--mode", "hybrid",
        "--max-distance", "1.5", "--limit", "5", "--reasons",
        env={"CSTP_PORT": str(port), "CSTP_TOKEN": TOKEN},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    decisions = json.loads(result.stdout)["decisions"]
    assert decisions, "the examples hold reviewed high-stakes decisions of 2024-2025"
    for d in decisions:
        assert d["stakes"] in ("high", "critical")
        assert 0.5 <= d["confidence"] <= 0.95
        assert "2024-01-01" <= d["date"][:10] <= "2025-12-31"
        assert d["status"] == "reviewed"
        assert d["distance"] <= 1.5
        assert isinstance(d["reasons"], list)
    assert len(decisions) <= 5


@pytest.mark.slow
def test_query_that_the_service_refuses_exits_1_with_its_code(port: int) -> None:
    env = {"CSTP_PORT": str(port), "CSTP_TOKEN": TOKEN}
    bad = cstp("query", "anything", "--min-confidence", "2", env=env)
    assert bad.returncode == exit_codes.FAILED == 1
    assert "-32602" in bad.stderr and "filters.minConfidence" in bad.stderr
    unauthorized = cstp("query", "anything", env={"CSTP_PORT": str(port), "CSTP_TOKEN": "no"})
    assert unauthorized.returncode == 1
    assert "-32001" in unauthorized.stderr


@pytest.mark.slow
def test_query_url_wins_over_host_and_port(port: int) -> None:
    env = {"CSTP_URL": f"http://127.0.0.1:{port}", "CSTP_PORT": "1", "CSTP_TOKEN": TOKEN}
    result = cstp("query", "database migration", "--json", env=env)
    assert result.returncode == 0, result.stderr


def test_get_prints_links_and_history_as_text_not_python() -> None:
    """Reported: `cstp get` printed `links` as a Python dict."""
    wire = {
        "id": "a1",
        "title": "Use [bold]Kafka[/bold]",
        "confidence": 0.9,
        "outcome": None,
        "reasons": [{"type": "analysis", "text": "Throughput"}],
        "tags": ["events", "bus"],
        "links": {"supersedes": ["b2", "c3"], "supersededBy": [], "relatedTo": ["d4"]},
        "history": [{"at": "2026-01-02T03:04:05Z", "by": "agent", "reason": "review"}],
    }
    assert record_lines(wire) == [
        ("id", "a1"),
        ("title", "Use [bold]Kafka[/bold]"),
        ("confidence", "0.9"),
        ("reason (analysis)", "Throughput"),
        ("tags", "events, bus"),
        ("links.supersedes", "b2, c3"),
        ("links.relatedTo", "d4"),
        ("history", '{"at": "2026-01-02T03:04:05Z", "by": "agent", "reason": "review"}'),
    ]


def test_without_a_bar_progress_is_logged_every_few_seconds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Reported: `cstp index` without a terminal printed nothing for minutes."""
    now = [0.0]
    advance = ProgressLog(100, lambda: now[0])
    with caplog.at_level(logging.INFO, logger="a2a.cli.indexing"):
        for _ in range(10):  # 10 records a second
            now[0] += 1
            advance(10)
    assert [record.getMessage() for record in caplog.records] == [
        f"indexing: {done} of 100 records embedded or unchanged ({done}%), {seconds} s"
        for done, seconds in ((50, 5), (100, 10))
    ]


def test_index_logs_in_the_log_format(tmp_path: Path) -> None:
    """Reported: under CSTP_LOG_FORMAT=json, the indexing lines stayed plain text."""
    env = {"CSTP_DATA_DIR": str(tmp_path), "CSTP_EMBEDDING_MODEL": FAST, "CSTP_LOG_FORMAT": "json"}
    result = cstp("index", EXAMPLES, env=env)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    assert any(re.match(r"indexed into .*: 48 new, 0 updated", line["message"]) for line in lines)


@pytest.mark.slow
def test_serve_logs_its_indexing_in_the_log_format_and_the_console_url(tmp_path: Path) -> None:
    """Reported: `make run` (serve --index) printed its indexing lines as plain text under
    CSTP_LOG_FORMAT=json, and never said where the console is."""
    port = free_port()
    env = {"CSTP_DATA_DIR": str(tmp_path), "CSTP_EMBEDDING_MODEL": FAST, "CSTP_LOG_FORMAT": "json"}
    server = start_cstp(port, env, "--index", EXAMPLES)
    try:
        lines = [json.loads(line) for line in output_of(server).splitlines()]
    finally:
        stop(server)
    messages = [line["message"] for line in lines]
    assert any(re.match(r"indexed into .*: 48 new", message) for message in messages), messages
    assert f"console: http://127.0.0.1:{port}/console" in messages


@pytest.mark.slow
@pytest.mark.parametrize("command", [["query", "anything"], ["list"]], ids=["query", "list"])
def test_without_a_token_the_32001_says_how_to_give_one(port: int, command: list[str]) -> None:
    """Reported: with auth on and no token, the CLI said only "-32001 Unauthorized"."""
    result = cstp(*command, env={"CSTP_PORT": str(port), "CSTP_TOKEN": "", "CSTP_URL": ""})
    assert result.returncode == exit_codes.FAILED, result.stderr
    assert "-32001" in result.stderr
    assert "CSTP_TOKEN" in result.stderr and "--token" in result.stderr
