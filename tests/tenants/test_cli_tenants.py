"""Tenants from the shell and the typed clients (CONTRACT.md, Tenants; docs/tenants.md):
`cstp index --tenant`, `--tenant` on the client commands (and `*` where the method takes it),
`cstp tenants`, and `tenant=` on CSTPClient and AsyncCSTPClient. Help and exit codes run
in-process; the rest runs the `cstp` command against a real `cstp serve` over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from a2a.app.tenants import ListTenantsResult as ServedListTenantsResult
from a2a.cli import exit_codes
from a2a.cli.main import app
from a2a.client import AsyncCSTPClient, CSTPClient, ForbiddenError, InvalidParamsError
from a2a.client.tenants import ListTenantsResult, with_tenant
from tests.conftest import REPO
from tests.decisions.lifecycle_wire import Served
from tests.decisions.wire import FAST_MODEL
from tests.servers import cstp
from tests.tenants.wire import ACME_TOKEN, ORG_TOKEN, ROOT_TOKEN, served

RUNNER = CliRunner()
EXAMPLES = REPO / "examples" / "decisions"
#: Indexed from the shell before the service starts: 5 decisions in acme, 6 in globex.
FILES = {"acme": EXAMPLES / "architecture.yaml", "globex": EXAMPLES / "data.yaml"}
#: The commands that take --tenant, and those whose method also takes "*".
ONE_TENANT = ["index", "record", "review", "get", "list", "update", "delete", "stats", "drift"]
EVERY_TENANT = ["query", "similar", "calibration"]
UNREACHABLE = {"CSTP_URL": "http://127.0.0.1:1"}


def help_page(*command: str) -> str:
    result = RUNNER.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", ONE_TENANT + EVERY_TENANT)
def test_every_command_that_reads_or_writes_decisions_takes_tenant(command: str) -> None:
    page = help_page(command)
    metavar = "NAME|*" if command in EVERY_TENANT else "NAME"
    assert f"--tenant {metavar} " in page


def test_cstp_tenants_has_help_and_is_listed() -> None:
    assert "cstp.listTenants" in help_page("tenants")
    assert "tenants" in help_page()


@pytest.mark.parametrize(
    "args",
    [
        ["index", "--tenant", "Acme", "somewhere"],
        ["index", "--tenant", "*", "somewhere"],
        ["index", "--tenant", "-acme", "somewhere"],
        ["query", "x", "--tenant", "acme_corp"],
        ["get", "an-id", "--tenant", "*"],
        ["list", "--tenant", ""],
        ["stats", "--tenant", "a" * 64],
    ],
)
def test_a_bad_tenant_name_is_a_usage_error_naming_the_option(args: list[str]) -> None:
    result = RUNNER.invoke(app, args, env=UNREACHABLE)
    assert result.exit_code == exit_codes.SETTINGS == 2, result.output
    assert "--tenant" in result.output


def test_a_bad_tenant_in_a_token_entry_is_printed_whole(tmp_path: Path) -> None:
    # The settings error names the pattern; rich markup once ate its "[a-z0-9]" parts. The
    # commands that serve or write the store check the service's tokens; client commands
    # use CSTP_TOKEN alone.
    env = {"CSTP_AUTH_TOKENS": "a:token-0123456789:read:Acme", "CSTP_DATA_DIR": str(tmp_path)}
    for args in (["index", str(tmp_path)], ["serve", "--port", "1"]):
        done = cstp(*args, env=env)
        assert done.returncode == exit_codes.SETTINGS, done.stderr
        assert "tenant 'Acme' must match [a-z0-9][a-z0-9-]{0,62}" in done.stderr


@pytest.mark.parametrize("command", [["query", "x"], ["similar", "--tag", "a"], ["calibration"]])
def test_star_is_accepted_where_the_method_takes_it(command: list[str]) -> None:
    # It gets as far as calling the (absent) service.
    result = RUNNER.invoke(app, [*command, "--tenant", "*"], env=UNREACHABLE)
    assert result.exit_code == exit_codes.UNREACHABLE, result.output


def test_the_client_adds_its_tenant_to_every_call_but_list_tenants() -> None:
    assert with_tenant("cstp.getDecision", {"id": "a"}, "acme") == {"id": "a", "tenant": "acme"}
    assert with_tenant("rpc.discover", None, "acme") == {"tenant": "acme"}
    assert with_tenant("cstp.listTenants", {}, "acme") == {}
    assert with_tenant("cstp.getDecision", {"id": "a", "tenant": "b"}, "acme")["tenant"] == "b"
    assert with_tenant("cstp.getDecision", {"id": "a"}, None) == {"id": "a"}


def shape(schema: Any) -> Any:
    """A JSON schema without its descriptions (the words differ, the shape must not)."""
    if isinstance(schema, dict):
        return {k: shape(v) for k, v in schema.items() if k != "description"}
    return [shape(v) for v in schema] if isinstance(schema, list) else schema


def test_the_clients_list_tenants_result_is_the_served_one() -> None:
    client, served_ = ListTenantsResult, ServedListTenantsResult
    assert shape(client.model_json_schema()) == shape(served_.model_json_schema())


# -- against a real service -----------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Each tenant indexed with `cstp index --tenant` (before the service owns the store)."""
    folder = tmp_path_factory.mktemp("cli-tenants")
    env = {"CSTP_DATA_DIR": str(folder / "data"), "CSTP_EMBEDDING_MODEL": FAST_MODEL}
    for tenant, path in FILES.items():
        indexed = cstp("index", "--tenant", tenant, str(path), env=env)
        assert indexed.returncode == 0, indexed.stderr[-3000:]
        assert f"tenant {tenant}: collection t.{tenant}." in indexed.stderr
    with served(folder, "embedded") as s:
        yield s


def run(s: Served, token: str, *args: str) -> Any:
    """`cstp <args> --json` against `s`; the parsed output."""
    done = cstp(*args, "--json", env={"CSTP_URL": s.url, "CSTP_TOKEN": token})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def ids_in(path: Path) -> set[str]:
    return {
        line.split('"')[1] for line in path.read_text().splitlines() if line.startswith("- id:")
    }


@pytest.mark.slow
def test_cstp_tenants_lists_what_the_token_may_use(server: Served) -> None:
    assert run(server, ORG_TOKEN, "tenants") == {
        "tenants": [{"name": "acme", "decisions": 5}, {"name": "globex", "decisions": 6}]
    }
    assert run(server, ACME_TOKEN, "tenants") == {"tenants": [{"name": "acme", "decisions": 5}]}
    table = cstp("tenants", env={"CSTP_URL": server.url, "CSTP_TOKEN": ORG_TOKEN})
    assert table.returncode == 0, table.stderr
    rows = [line.split() for line in table.stdout.splitlines()]
    assert ["│", "acme", "│", "5", "│"] in rows and ["│", "globex", "│", "6", "│"] in rows


@pytest.mark.slow
def test_index_and_query_per_tenant_and_over_every_tenant(server: Served) -> None:
    for tenant, path in FILES.items():
        found = run(server, ORG_TOKEN, "query", "events", "--tenant", tenant, "--limit", "50")
        assert {d["id"] for d in found["decisions"]} == ids_in(path)
        assert {d["tenant"] for d in found["decisions"]} == {tenant}
    every = run(server, ORG_TOKEN, "query", "events", "--tenant", "*", "--limit", "50")
    assert {(d["tenant"], d["id"]) for d in every["decisions"]} == {
        (tenant, id_) for tenant, path in FILES.items() for id_ in ids_in(path)
    }
    # The table names each decision's tenant when it searched every one.
    env = {"CSTP_URL": server.url, "CSTP_TOKEN": ORG_TOKEN, "COLUMNS": "200"}
    table = cstp("query", "events", "--tenant", "*", env=env)
    assert table.returncode == 0, table.stderr
    header = next(line for line in table.stdout.splitlines() if line.startswith("┃"))
    assert header.split("┃")[-2].strip() == "tenant"
    assert " acme " in table.stdout and " globex " in table.stdout


@pytest.mark.slow
def test_the_service_refusals_exit_1_with_the_code(server: Served) -> None:
    env = {"CSTP_URL": server.url, "CSTP_TOKEN": ORG_TOKEN}
    several = cstp("query", "events", env=env)  # two tenants granted, none named
    assert several.returncode == exit_codes.FAILED
    assert "error -32602" in several.stderr and '"field": "tenant"' in several.stderr
    env["CSTP_TOKEN"] = ACME_TOKEN
    other = cstp("list", "--tenant", "globex", env=env)
    assert other.returncode == exit_codes.FAILED
    assert "error -32004" in other.stderr and '"requiredTenant": "globex"' in other.stderr


@pytest.mark.slow
def test_the_decision_commands_pass_the_tenant_along(server: Served, tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("id: shell-1\ntitle: From the shell\nconfidence: 0.6\n", encoding="utf-8")
    root = ("--tenant", "fresh")  # ROOT_TOKEN grants "*": every call must name a tenant
    assert run(server, ROOT_TOKEN, "record", str(path), *root) == {"id": "shell-1", "created": True}
    assert run(server, ROOT_TOKEN, "get", "shell-1", *root)["tenant"] == "fresh"
    reviewed = run(server, ROOT_TOKEN, "review", "shell-1", "--outcome", "success", *root)
    assert (reviewed["tenant"], reviewed["outcome"]) == ("fresh", "success")
    changes = ("--confidence", "0.7", "--reason", "r")
    assert run(server, ROOT_TOKEN, "update", "shell-1", *changes, *root)["confidence"] == 0.7
    listed = run(server, ROOT_TOKEN, "list", *root)["decisions"]
    assert [(d["tenant"], d["id"]) for d in listed] == [("fresh", "shell-1")]
    assert run(server, ROOT_TOKEN, "stats", *root)["decisions"] == 1
    assert run(server, ROOT_TOKEN, "calibration", *root)["decisions"] == 1
    similar = run(server, ROOT_TOKEN, "similar", "shell-1", *root)
    assert all(d["tenant"] == "fresh" for d in similar["decisions"])
    assert run(server, ROOT_TOKEN, "drift", *root)  # answered, from tenant "fresh"
    # Other tenants never saw it.
    gone = cstp(
        "get", "shell-1", "--tenant", "acme", env={"CSTP_URL": server.url, "CSTP_TOKEN": ROOT_TOKEN}
    )
    assert gone.returncode == exit_codes.FAILED
    assert run(server, ROOT_TOKEN, "delete", "shell-1", "--reason", "a test", *root)


@pytest.mark.slow
async def test_the_typed_clients_send_their_tenant(server: Served) -> None:
    with CSTPClient(server.url, ORG_TOKEN, tenant="*") as client:
        every = client.query_decisions("events", limit=50)
        assert {d.tenant for d in every.decisions} == {"acme", "globex"}
        assert [t.name for t in client.list_tenants().tenants] == ["acme", "globex"]
        with pytest.raises(InvalidParamsError) as refused:  # "*" names no one decision
            client.get_decision("bf184dcc")
        assert refused.value.data["errors"][0]["field"] == "tenant"
    with CSTPClient(server.url, ACME_TOKEN, tenant="globex") as client:
        with pytest.raises(ForbiddenError) as forbidden:
            client.get_stats()
        assert forbidden.value.data == {"requiredTenant": "globex"}
    async with AsyncCSTPClient(server.url, ORG_TOKEN, tenant="globex") as aclient:
        assert (await aclient.get_stats()).decisions == 6
        scored = (await aclient.get_calibration()).decisions
        assert [t.decisions for t in (await aclient.list_tenants()).tenants] == [5, 6]
    async with AsyncCSTPClient(server.url, ORG_TOKEN, tenant="acme") as aclient:
        scored += (await aclient.get_calibration()).decisions
    with CSTPClient(server.url, ORG_TOKEN, tenant="*") as client:
        assert client.get_calibration().decisions == scored > 0
