"""`cstp guardrails test FILE CASES`: test cases for the rules, run without a server, as
`opa test` runs policy tests (CONTRACT.md, Guardrails: Testing rules).

A cases file is JSON Lines, one case a line (blank lines and lines starting with `#`
skipped):

    {"name": "low confidence blocks", "proposal": {"title": "...", "stakes": "high",
     "confidence": 0.4}, "precedents": [...], "calibration": {"brierScore": 0.3,
     "decisions": 12}, "tenant": "acme", "now": "2026-12-06T09:00:00Z",
     "expect": {"verdict": "block", "rules": ["high-stakes-confidence"]}}

`precedents` (default none), `calibration` (default no scored decision), `tenant`
(default `default`), `now` (default the time of the run) and `name` are optional;
`expect.rules` is compared as a set of violated rule ids (default: none).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from a2a.errors import CaseError
from a2a.guardrails.engine import VERDICTS, check
from a2a.guardrails.rules import RuleSet
from a2a.guardrails.variables import PRECEDENT_FIELDS, CheckInput

_KEYS: Final = frozenset(
    {"name", "proposal", "precedents", "calibration", "tenant", "now", "expect"}
)


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case run: its line number and name, what it expected and what the rules gave."""

    line: int
    name: str
    expected_verdict: str
    expected_rules: frozenset[str]
    verdict: str
    rules: frozenset[str]

    @property
    def passed(self) -> bool:
        return (self.verdict, self.rules) == (self.expected_verdict, self.expected_rules)

    def describe(self) -> str:
        """`line 3 (name): verdict warn, expected block; rules [a], expected [a, b]`."""
        parts = []
        if self.verdict != self.expected_verdict:
            parts.append(f"verdict {self.verdict}, expected {self.expected_verdict}")
        if self.rules != self.expected_rules:
            parts.append(f"rules {sorted(self.rules)}, expected {sorted(self.expected_rules)}")
        return f"line {self.line} ({self.name}): " + ("; ".join(parts) or "as expected")


def run_cases(
    rules: RuleSet,
    lines: list[str],
    proposal_check: Callable[[Any], dict[str, Any]],
) -> list[CaseResult]:
    """Every case of `lines` (a JSON Lines file's lines) run against `rules`.

    `proposal_check` validates a case's proposal as cstp.checkGuardrails does (raising
    ValueError naming the field) and returns its fields as sent. Raises CaseError naming
    the line of the first case that is not JSON or not a case.
    """
    return [_run(rules, n, case, proposal_check) for n, case in _cases(lines)]


def _cases(lines: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, text in enumerate(lines, start=1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        try:
            case = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CaseError(f"line {n}: not JSON ({exc.msg})") from None
        if not isinstance(case, dict):
            raise CaseError(f"line {n}: a case is a JSON object")
        unknown = sorted(set(case) - _KEYS)
        if unknown:
            raise CaseError(f"line {n}: unknown key {unknown[0]!r}")
        yield n, case


def _run(
    rules: RuleSet, n: int, case: dict[str, Any], proposal_check: Callable[[Any], dict[str, Any]]
) -> CaseResult:
    expect = case.get("expect")
    if not isinstance(expect, dict) or expect.get("verdict") not in VERDICTS:
        raise CaseError(f'line {n}: expect must be {{"verdict": allow|warn|block, "rules": [...]}}')
    expected_rules = expect.get("rules", [])
    if not isinstance(expected_rules, list) or not all(isinstance(r, str) for r in expected_rules):
        raise CaseError(f"line {n}: expect.rules must be a list of rule ids")
    try:
        proposal = proposal_check(case.get("proposal"))
        given = CheckInput(
            proposal,
            _precedents(case.get("precedents", [])),
            _calibration(case.get("calibration", {"decisions": 0})),
            _now(case.get("now")),
        )
        tenant = case.get("tenant", "default")
        if not isinstance(tenant, str):
            raise ValueError("tenant: must be a tenant name")
        outcome = check(rules.for_tenant(tenant), given)
    except ValueError as exc:
        raise CaseError(f"line {n}: {exc}") from None
    name = case.get("name")
    return CaseResult(
        line=n,
        name=name if isinstance(name, str) else f"case {n}",
        expected_verdict=expect["verdict"],
        expected_rules=frozenset(expected_rules),
        verdict=outcome.verdict,
        rules=frozenset(v.rule for v in outcome.violations),
    )


def _precedents(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        raise ValueError("precedents: must be a list of objects")
    for p in value:
        unknown = sorted(set(p) - set(PRECEDENT_FIELDS))
        if unknown:
            raise ValueError(f"precedents: unknown field {unknown[0]!r}")
    return value


def _calibration(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) - {"brierScore", "decisions"}:
        raise ValueError('calibration: must be {"brierScore": float, "decisions": int}')
    return value


def _now(value: Any) -> datetime:
    if value is None:
        return datetime.now(UTC)
    if not isinstance(value, str):
        raise ValueError("now: must be an RFC 3339 date-time")
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
