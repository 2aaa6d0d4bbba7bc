"""cstp.checkGuardrails over a real `cstp serve` with a rules file (CONTRACT.md,
Guardrails): allow, warn and block; a rule limited to one tenant; `when` and `require`
failing at run time; bad params; the audit line and /metrics; nothing written; `cstp
guard`'s exit codes; the MCP tool. One server for the module."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from a2a.cli import exit_codes
from a2a.cli.main import app
from tests.console.browser import chromium, posted
from tests.decisions.lifecycle_wire import Served
from tests.decisions.wire import call, result
from tests.guardrails.rules import ACME_RULES, GLOBEX_RULES, RULES
from tests.mcp_session import mcp_session
from tests.servers import output_of
from tests.tenants.wire import ACME, ACME_TOKEN, GLOBEX_TOKEN, served

pytestmark = pytest.mark.slow

FAILED_ID = "acme-db-move"
RUNNER = CliRunner()
SECRET_TITLE = "Move the ledger database to cluster nine"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder: Path = tmp_path_factory.mktemp("guardrails")
    rules = folder / "rules.toml"
    rules.write_text(RULES)
    with served(folder, "embedded", CSTP_GUARDRAILS_FILE=str(rules)) as s:
        failed = {
            "id": FAILED_ID,
            "title": "Move the ledger database",
            "category": "arch",
            "stakes": "high",
            "confidence": 0.9,
            "outcome": "failure",
            "tags": ["db"],
        }
        params = {"decision": failed, "tenant": "acme"}
        assert result(s.url, "cstp.recordDecision", params, ACME_TOKEN)["created"] is True
        yield s


def check(server: Served, proposal: dict[str, Any], token: str = ACME_TOKEN) -> Any:
    return result(server.url, "cstp.checkGuardrails", {"proposal": proposal}, token)


def violated(answer: dict[str, Any]) -> list[str]:
    return [v["rule"] for v in answer["violations"]]


def test_allow_with_no_precedent_and_no_calibration(server: Served) -> None:
    answer = check(server, {"title": "Rename a dashboard", "category": "ops"})
    assert answer == {
        "verdict": "allow",
        "violations": [],
        "evaluated": ACME_RULES,
        "precedents": [],
        "calibration": {"category": "ops", "decisions": 0, "brierScore": None},
    }


def test_warn_names_the_close_failure_and_shows_it(server: Served) -> None:
    proposal = {"title": SECRET_TITLE, "category": "arch", "stakes": "high", "confidence": 0.8}
    answer = check(server, {**proposal, "tags": ["db"]})
    assert answer["verdict"] == "warn"
    assert answer["violations"] == [
        {
            "rule": "no-close-failure",
            "severity": "warn",
            "message": "A close precedent failed: read it first",
        }
    ]
    [precedent] = answer["precedents"]
    assert (precedent["id"], precedent["outcome"], precedent["distance"]) == (
        FAILED_ID,
        "failure",
        0.0,
    )
    assert precedent["tenant"] == "acme"
    # The caller's own calibration in `arch`: one decision at 0.9 that failed.
    assert answer["calibration"]["decisions"] == 1
    assert answer["calibration"]["brierScore"] == pytest.approx(0.81)


def test_block_when_any_violated_rule_blocks(server: Served) -> None:
    proposal = {"title": "x", "category": "arch", "stakes": "high", "confidence": 0.5}
    answer = check(server, {**proposal, "tags": ["db"]})
    assert answer["verdict"] == "block"
    assert violated(answer) == ["high-stakes-confidence", "no-close-failure"]


def test_a_rule_limited_to_acme_is_not_evaluated_in_globex(server: Served) -> None:
    proposal = {"title": "Rotate the TLS keys", "category": "security"}
    acme = check(server, proposal)
    globex = check(server, proposal, GLOBEX_TOKEN)
    assert (acme["verdict"], violated(acme)) == ("block", ["acme-security-reviewed"])
    assert acme["evaluated"] == ACME_RULES
    assert (globex["verdict"], violated(globex), globex["evaluated"]) == ("allow", [], GLOBEX_RULES)
    reviewed = check(server, {**proposal, "tags": ["reviewed"]})
    assert reviewed["verdict"] == "allow"


def test_a_when_failing_at_run_time_does_not_apply(server: Served) -> None:
    # `proposal.confidence > 0.95` with no confidence: an error, so the rule does not apply.
    assert check(server, {"title": "x"})["verdict"] == "allow"
    sure = check(server, {"title": "x", "confidence": 0.99})
    assert violated(sure) == ["very-sure-is-suspicious"]


def test_a_require_failing_at_run_time_is_a_violation_naming_the_error(server: Served) -> None:
    answer = check(server, {"title": "Tidy the wiki", "stakes": "low"})
    assert answer["verdict"] == "warn"
    [violation] = answer["violations"]
    assert violation["rule"] == "low-stakes-say-confidence"
    assert violation["message"] == (
        "Say how confident you are (require failed: no such field 'confidence')"
    )


def test_bad_proposal_fields_are_named_with_record_decisions_bounds(server: Served) -> None:
    proposal = {"title": " ", "confidence": 1.5, "tags": ["x" * 65], "bogus": 1}
    answer = call(server.url, "cstp.checkGuardrails", {"proposal": proposal}, ACME_TOKEN)
    assert answer["error"]["code"] == -32602
    fields = sorted(e["field"] for e in answer["error"]["data"]["errors"])
    assert fields == ["proposal.bogus", "proposal.confidence", "proposal.tags[0]", "proposal.title"]
    missing = call(server.url, "cstp.checkGuardrails", {"proposal": {}}, ACME_TOKEN)
    assert [e["field"] for e in missing["error"]["data"]["errors"]] == ["proposal.title"]


def metric(server: Served, verdict: str) -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    line = f'cstp_guardrail_checks_total{{verdict="{verdict}"}} '
    found = [row for row in text.splitlines() if row.startswith(line)]
    return float(found[0].split()[-1]) if found else 0.0


def test_one_audit_line_and_one_count_per_check_and_nothing_written(server: Served) -> None:
    stats = {"tenant": "acme"}
    before = result(server.url, "cstp.getStats", stats, ACME_TOKEN)["decisions"]
    blocks = metric(server, "block")
    proposal = {"title": SECRET_TITLE, "stakes": "high", "confidence": 0.2, "context": "ctx-9f3"}
    assert check(server, proposal)["verdict"] == "block"
    assert metric(server, "block") == blocks + 1
    assert result(server.url, "cstp.getStats", stats, ACME_TOKEN)["decisions"] == before
    lines = [
        json.loads(line)
        for line in output_of(server.process).splitlines()
        if '"guardrails checked"' in line
    ]
    last = lines[-1]
    assert (last["agent"], last["tenant"], last["verdict"]) == (ACME, "acme", "block")
    assert last["rules"] == ["high-stakes-confidence"]
    log = output_of(server.process)
    assert SECRET_TITLE not in log and "ctx-9f3" not in log


def test_cstp_guard_exit_codes(server: Served) -> None:
    # In process (CliRunner): a `cstp` subprocess costs ~4 s of imports here; the calls
    # still go over HTTP to the real server.
    env = {"CSTP_URL": server.url, "CSTP_TOKEN": ACME_TOKEN}
    flags = ["guard", "--title", "x", "--stakes", "high", "--confidence", "0.3"]
    blocked = RUNNER.invoke(app, flags, env=env)
    assert blocked.exit_code == exit_codes.GUARD_BLOCK == 7, blocked.output
    assert "block: high-stakes-confidence" in blocked.output
    warned = RUNNER.invoke(app, ["guard", "--title", "x", "--stakes", "low"], env=env)
    assert warned.exit_code == exit_codes.GUARD_WARN == 6, warned.output
    proposal = json.dumps({"title": "x", "stakes": "low", "confidence": 0.5})
    allowed = RUNNER.invoke(app, ["guard", "-", "--json"], input=proposal, env=env)
    assert allowed.exit_code == exit_codes.OK, allowed.output
    assert json.loads(allowed.output)["verdict"] == "allow"
    bad = RUNNER.invoke(app, ["guard", "--title", " "], env=env)
    assert bad.exit_code == exit_codes.FAILED, bad.output


def test_mcp_lists_the_tool_and_calls_it(server: Served) -> None:
    async def run() -> tuple[Any, Any]:
        async with mcp_session(server.url, ACME_TOKEN) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            arguments = {"proposal": {"title": "x", "stakes": "high", "confidence": 0.1}}
            return tools, await session.call_tool("cstp.checkGuardrails", arguments)

    tools, answer = asyncio.run(run())
    tool = tools["cstp.checkGuardrails"]
    assert "before acting" in (tool.description or "")
    assert tool.input_schema["required"] == ["proposal"]
    assert not answer.is_error
    assert answer.structured_content["verdict"] == "block"


def test_the_console_panel_shows_the_verdict_violations_and_precedents(server: Served) -> None:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        sent = posted(page)
        page.goto(f"{server.url}/console")
        page.fill("#token", ACME_TOKEN)
        page.click("#token-use")
        page.wait_for_selector("#tenant[data-listed='1']", state="attached")
        page.click("#nav-check")
        assert page.is_hidden("#filters-panel")
        page.fill("#check-title", SECRET_TITLE)
        page.fill("#check-category", "arch")
        page.select_option("#check-stakes", "high")
        page.fill("#check-confidence", "0.5")
        page.fill("#check-tags", "db")
        page.click("#check-submit")
        page.wait_for_selector("#check-verdict[data-verdict='block']")
        rules = page.eval_on_selector_all("#check-violations li", "e => e.map(n => n.dataset.rule)")
        messages = page.eval_on_selector_all(
            "#check-violations .violation-message", "e => e.map(n => n.textContent)"
        )
        shown = page.eval_on_selector_all(
            "#check-precedents .result", "e => e.map(n => n.dataset.id)"
        )
        outcomes = page.eval_on_selector_all(
            "#check-precedents .result", "e => e.map(n => n.dataset.outcome)"
        )
        calibration = page.text_content("#check-calibration") or ""
        # At 375 px the panel fits the window (no sideways scroll).
        page.set_viewport_size({"width": 375, "height": 812})
        narrow = page.evaluate("document.documentElement.scrollWidth")
        # Over a -32602, the field is marked.
        page.fill("#check-confidence", "3")
        page.click("#check-submit")
        page.wait_for_selector("#check-confidence[aria-invalid='true']")
        context.close()
    body = next(b for b in sent if b["method"] == "cstp.checkGuardrails")
    assert body["params"] == {
        "proposal": {
            "title": SECRET_TITLE,
            "category": "arch",
            "stakes": "high",
            "confidence": 0.5,
            "tags": ["db"],
        },
        "tenant": "acme",
    }
    direct = check(server, body["params"]["proposal"])
    assert rules == violated(direct) == ["high-stakes-confidence", "no-close-failure"]
    assert messages == [v["message"] for v in direct["violations"]]
    assert shown == [p["id"] for p in direct["precedents"]] == [FAILED_ID]
    assert outcomes == ["failure"]
    assert "Brier 0.810 over 1 scored decision(s)" in calibration
    assert narrow <= 375
