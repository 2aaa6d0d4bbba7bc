"""`cstp` options: one name per filter in every command, readable placeholders, `--version`,
`similar`, `docs`, and `--reasons` and the category note in table output; exit codes."""

from __future__ import annotations

import json
import re
from importlib.metadata import version

import pytest
from typer.testing import CliRunner

from a2a.cli import exit_codes
from a2a.cli.main import app
from a2a.cli.options import filters
from tests.conftest import EXAMPLES_TOKENS
from tests.servers import cstp

RUNNER = CliRunner()
COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands if c.callback)
#: Every filter option, as each command that filters names it.
FILTERS = {
    "--category", "--min-confidence", "--max-confidence", "--date-after", "--date-before",
    "--stakes", "--status",
}  # fmt: skip
FILTERING = ["query", "list", "calibration", "similar"]
#: click's names of Python types, which tell a user nothing about what to type.
TYPE_METAVAR = re.compile(r"^\s+--[\w-]+ (TEXT|FLOAT|INTEGER)\b", re.MULTILINE)
UNREACHABLE = {"CSTP_URL": "http://127.0.0.1:1"}
TOKEN = EXAMPLES_TOKENS["cli"]


def help_page(*command: str) -> str:
    result = RUNNER.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def options_of(page: str) -> set[str]:
    return set(re.findall(r"^\s+(--[\w-]+)", page, re.MULTILINE))


@pytest.mark.parametrize("command", FILTERING)
def test_every_filtering_command_names_the_filters_alike(command: str) -> None:
    assert options_of(help_page(command)) >= FILTERS


@pytest.mark.parametrize("command", [[], *[[c] for c in COMMANDS]], ids=["cstp", *COMMANDS])
def test_help_shows_readable_placeholders(command: list[str]) -> None:
    assert TYPE_METAVAR.findall(help_page(*command)) == []


def test_old_query_date_options_are_hidden_but_accepted() -> None:
    page = help_page("query")
    assert "--after" not in options_of(page) and "--before" not in options_of(page)
    # Accepted: the command gets as far as calling the (absent) service.
    result = RUNNER.invoke(
        app, ["query", "x", "--after", "2024-01-01", "--before", "2025-01-01"], env=UNREACHABLE
    )
    assert result.exit_code == exit_codes.UNREACHABLE


def test_a_date_given_twice_with_different_values_is_a_usage_error() -> None:
    result = RUNNER.invoke(
        app, ["query", "x", "--date-after", "2024-01-01", "--after", "2023-01-01"], env=UNREACHABLE
    )
    assert result.exit_code == exit_codes.SETTINGS == 2


def test_version_prints_the_installed_version() -> None:
    result = RUNNER.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"cstp {version('cstp')}"


def test_filters_send_only_what_is_given() -> None:
    assert filters() is None
    assert filters(category="a", date_after="2024-01-01", stakes=[]) == {
        "category": "a",
        "dateAfter": "2024-01-01",
    }


def test_similar_needs_exactly_one_of_an_id_and_a_proposal() -> None:
    neither = RUNNER.invoke(app, ["similar"], env=UNREACHABLE)
    both = RUNNER.invoke(app, ["similar", "d01", "--tag", "x"], env=UNREACHABLE)
    assert neither.exit_code == both.exit_code == exit_codes.SETTINGS


@pytest.mark.parametrize(
    "command", [["similar", "d01"], ["docs", "rate limits"]], ids=["similar", "docs"]
)
def test_similar_and_docs_exit_5_when_the_service_is_not_there(command: list[str]) -> None:
    assert RUNNER.invoke(app, command, env=UNREACHABLE).exit_code == exit_codes.UNREACHABLE


@pytest.mark.parametrize("command", ["similar", "docs"])
def test_bad_values_are_usage_errors(command: str) -> None:
    args = (
        ["--tag", "x", "--stakes", "huge"]
        if command == "similar"
        else ["q", "--max-sections", "two"]
    )
    assert RUNNER.invoke(app, [command, *args], env=UNREACHABLE).exit_code == 2


@pytest.fixture
def env(examples_service: str) -> dict[str, str]:
    """The session's real `cstp serve` with auth on over the example decisions."""
    return {"CSTP_URL": examples_service, "CSTP_TOKEN": TOKEN}


@pytest.mark.slow
def test_reasons_show_as_a_column_in_the_table(env: dict[str, str]) -> None:
    plain = cstp("query", "row-level security for tenants", "--limit", "2", env=env)
    asked = cstp("query", "row-level security for tenants", "--limit", "2", "--reasons", env=env)
    assert plain.returncode == asked.returncode == 0, asked.stderr
    assert "reasons" not in plain.stdout
    assert "reasons" in asked.stdout and "analysis" in asked.stdout


@pytest.mark.slow
def test_unknown_category_prints_the_known_ones(env: dict[str, str]) -> None:
    result = cstp("query", "database", "--category", "Architecture", env=env)
    assert result.returncode == 0, result.stderr
    assert 'category "Architecture"' in result.stdout
    assert '"architecture"' in result.stdout


@pytest.mark.slow
def test_similar_by_proposal_and_by_id(env: dict[str, str]) -> None:
    by_tags = cstp("similar", "--tag", "postgres", "--json", env=env)
    assert by_tags.returncode == 0, by_tags.stderr
    found = json.loads(by_tags.stdout)["decisions"]
    assert found and all(d["score"] > 0 for d in found)
    assert any("postgres" in d["tags"] for d in found)
    by_id = cstp("similar", found[0]["id"], "--limit", "3", env=env)
    assert by_id.returncode == 0, by_id.stderr
    assert "similar decision(s)" in by_id.stdout
    unknown = cstp("similar", "no-such-id", env=env)
    assert unknown.returncode == exit_codes.FAILED
    assert "-32602" in unknown.stderr


@pytest.mark.slow
def test_docs_prints_sections_of_the_guide(env: dict[str, str]) -> None:
    result = cstp("docs", "rate limits", "--max-sections", "2", "--json", env=env)
    assert result.returncode == 0, result.stderr
    sections = json.loads(result.stdout)["sections"]
    assert 1 <= len(sections) <= 2
    table = cstp("docs", "rate limits", "--max-sections", "1", env=env)
    assert sections[0]["heading"] in table.stdout
