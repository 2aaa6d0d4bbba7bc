"""The rules file refused or taken, and the rule author's tools (`cstp guardrails check`,
`cstp guardrails test`), in process: no server (CONTRACT.md, Guardrails)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from a2a.cli import exit_codes
from a2a.cli.main import app
from tests.guardrails.rules import RULES

RUNNER = CliRunner()


def rule(require: str, **fields: str) -> str:
    body = {"id": "r1", "require": require, "severity": "warn", "message": "m", **fields}
    return "[[rule]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in body.items())


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        (rule("proposal.stakes =="), "rule[0] ('r1') require: syntax: "),
        (rule('propsal.stakes == "high"'), "require: unknown variable propsal"),
        (rule('proposal.confidence >= "high"'), "require: wrong type: No such overload"),
        (rule("proposal.confidnce >= 0.5"), "require: no such field 'confidnce'"),
        (rule("proposal.title"), "require: the value is str, not a bool"),
        (
            rule("proposal.tags.all(a, proposal.tags.all(b, proposal.tags.all(c, a != c)))"),
            "require: comprehensions nested 3 deep, at most 2",
        ),
        (rule("true", when="1 / 0 == 1"), "when: division by zero"),
        (rule("true", severity="deny"), "severity: Input should be 'block' or 'warn'"),
        (rule("true", tenants=["Acme"]), "tenants.0: String should match pattern"),
        (rule("true", colour="red"), "colour: unknown field"),
        (rule("true") + rule("false"), "rule[1] ('r1') id: 'r1' is used twice"),
        ("[[rules]]\nid = 1\n", "unknown table 'rules' (use [[rule]])"),
        ("[[rule]\n", "not TOML"),
    ],
)
def test_a_bad_file_is_refused_naming_the_rule_and_the_fault(
    tmp_path: Path, text: str, fault: str
) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(text)
    answer = RUNNER.invoke(app, ["guardrails", "check", str(path)])
    assert answer.exit_code == exit_codes.SETTINGS
    assert fault in " ".join(answer.output.split()), answer.output


def test_check_takes_a_good_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(RULES)
    answer = RUNNER.invoke(app, ["guardrails", "check", str(path)])
    assert answer.exit_code == exit_codes.OK, answer.output
    assert "5 rule(s), all valid" in answer.output


CASES = [
    {
        "name": "confident high stakes",
        "proposal": {"title": "x", "stakes": "high", "confidence": 0.9},
        "expect": {"verdict": "allow"},
    },
    {
        "name": "low confidence blocks",
        "proposal": {"title": "x", "stakes": "high", "confidence": 0.4},
        "expect": {"verdict": "block", "rules": ["high-stakes-confidence"]},
    },
    {
        "name": "a close failure warns",
        "proposal": {"title": "x"},
        "precedents": [{"id": "a", "distance": 0.1, "outcome": "failure"}],
        "expect": {"verdict": "warn", "rules": ["no-close-failure"]},
    },
    {
        "name": "security in acme",
        "tenant": "acme",
        "proposal": {"title": "x", "category": "security"},
        "expect": {"verdict": "block", "rules": ["acme-security-reviewed"]},
    },
    {
        "name": "security in globex",
        "tenant": "globex",
        "proposal": {"title": "x", "category": "security"},
        "expect": {"verdict": "allow"},
    },
]


def run_cases(tmp_path: Path, cases: list[dict[str, object]]) -> tuple[int, str]:
    rules, lines = tmp_path / "rules.toml", tmp_path / "cases.jsonl"
    rules.write_text(RULES)
    lines.write_text("# guardrails cases\n" + "".join(json.dumps(c) + "\n" for c in cases))
    answer = RUNNER.invoke(app, ["guardrails", "test", str(rules), str(lines)])
    return answer.exit_code, answer.output


def test_test_passes_when_every_case_gives_what_it_expects(tmp_path: Path) -> None:
    assert run_cases(tmp_path, CASES) == (exit_codes.OK, "5/5 case(s) passed\n")


def test_test_fails_naming_each_case_that_differs(tmp_path: Path) -> None:
    wrong = [
        CASES[0],
        {**CASES[1], "expect": {"verdict": "warn", "rules": ["high-stakes-confidence"]}},
        {**CASES[4], "expect": {"verdict": "allow", "rules": ["acme-security-reviewed"]}},
    ]
    code, output = run_cases(tmp_path, wrong)
    assert code == exit_codes.FAILED
    assert output.splitlines() == [
        "FAIL line 3 (low confidence blocks): verdict block, expected warn",
        "FAIL line 4 (security in globex): rules [], expected ['acme-security-reviewed']",
        "1/3 case(s) passed",
    ]


def test_test_refuses_a_case_it_cannot_run(tmp_path: Path) -> None:
    bad = {"proposal": {"title": "x", "confidence": 2}, "expect": {"verdict": "allow"}}
    code, output = run_cases(tmp_path, [CASES[0], bad])
    assert code == exit_codes.SETTINGS
    assert "line 3: proposal.confidence: Input should be less than or equal to 1" in output


def test_the_five_example_rules_pass_their_cases() -> None:
    examples = Path(__file__).resolve().parents[2] / "examples" / "guardrails"
    files = [str(examples / "rules.toml"), str(examples / "cases.jsonl")]
    answer = RUNNER.invoke(app, ["guardrails", "test", *files])
    assert (answer.exit_code, answer.output) == (exit_codes.OK, "8/8 case(s) passed\n")
