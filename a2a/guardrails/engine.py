"""One check: every rule of the tenant evaluated on one input, and the verdict
(CONTRACT.md, Guardrails). Pure: no I/O, no clock, nothing written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from a2a.errors import ExpressionError
from a2a.guardrails.rules import Rule, Severity
from a2a.guardrails.variables import CheckInput

Verdict = Literal["allow", "warn", "block"]
#: Verdicts from mildest to strictest; a check's verdict is its strictest violation's.
VERDICTS: Final[tuple[Verdict, ...]] = ("allow", "warn", "block")


@dataclass(frozen=True, slots=True)
class Violation:
    """A violated rule: its id, severity and message; a `require` that failed at run time
    has the error appended to its message (`... (require failed: no such field 'x')`)."""

    rule: str
    severity: Severity
    message: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """The verdict, the violations in rule order, and how many rules were evaluated."""

    verdict: Verdict
    violations: tuple[Violation, ...]
    evaluated: int


def check(rules: tuple[Rule, ...], given: CheckInput) -> Outcome:
    """Evaluate `rules` (one tenant's) on `given`.

    A rule applies when its `when` is true; a `when` that fails at run time (a field the
    proposal lacks, a type error) means it does not apply, as an undefined rule does not
    fire in OPA. An applying rule is violated when its `require` is false, or fails at
    run time (never a silent pass). `block` if any violation blocks, else `warn` if any
    warns, else `allow`; `evaluated` counts every rule whose `when` was evaluated.
    """
    context = given.context()
    violations: list[Violation] = []
    for rule in rules:
        try:
            if not rule.when.run(context):
                continue
        except ExpressionError:
            continue
        try:
            if rule.require.run(context):
                continue
            message = rule.message
        except ExpressionError as exc:
            message = f"{rule.message} (require failed: {exc})"
        violations.append(Violation(rule.id, rule.severity, message))
    return Outcome(verdict_of(violations), tuple(violations), len(rules))


def verdict_of(violations: list[Violation]) -> Verdict:
    """The strictest severity among `violations`, `allow` when there are none."""
    return max((v.severity for v in violations), key=VERDICTS.index, default="allow")
