"""The rules file (CSTP_GUARDRAILS_FILE), TOML, one `[[rule]]` each, compiled once:

    [[rule]]
    id = "high-stakes-confidence"          # unique; 1..100 of [A-Za-z0-9._:-]
    description = "High stakes need confidence"
    when = 'proposal.stakes == "high"'     # CEL; the rule applies when true
    require = 'has(proposal.confidence) && proposal.confidence >= 0.7'  # violated when false
    severity = "block"                     # block | warn
    message = "High-stakes moves need confidence of at least 0.7"
    tenants = ["acme"]                     # optional: the tenants it applies to (default all)

Every fault is a RulesError naming the file, the rule and the field, with the CEL error:
`CSTP_GUARDRAILS_FILE rules.toml: rule[2] ("no-repeat") require: unknown variable propsal`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from a2a.errors import ExpressionError, RulesError
from a2a.guardrails.expressions import Expression
from a2a.guardrails.variables import full_probe, largest_probe
from a2a.tenants.names import TENANT_NAME
from a2a.toml_tables import array_of_tables, read_toml

#: Most rules one file may hold (each check evaluates every rule that names its tenant).
MAX_RULES: Final = 200
#: Longest expression, characters.
MAX_EXPRESSION_CHARS: Final = 4000
Severity = Literal["block", "warn"]


class RuleConfig(BaseModel):
    """One `[[rule]]` as written, before its expressions are compiled."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._:-]+$")]
    description: Annotated[str, Field(max_length=1000)] = ""
    when: Annotated[str, Field(min_length=1, max_length=MAX_EXPRESSION_CHARS)] = "true"
    require: Annotated[str, Field(min_length=1, max_length=MAX_EXPRESSION_CHARS)]
    severity: Severity
    message: Annotated[str, Field(min_length=1, max_length=1000)]
    tenants: list[Annotated[str, Field(pattern=f"^{TENANT_NAME.pattern}$")]] | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule with its expressions compiled; `tenants` None: every tenant."""

    id: str
    description: str
    when: Expression
    require: Expression
    severity: Severity
    message: str
    tenants: frozenset[str] | None

    def applies_to(self, tenant: str) -> bool:
        """True when the rule names `tenant`, or names none."""
        return self.tenants is None or tenant in self.tenants


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules of one file in file order (empty: no file configured)."""

    rules: tuple[Rule, ...] = ()

    def for_tenant(self, tenant: str) -> tuple[Rule, ...]:
        """The rules that apply to `tenant`, in file order."""
        return tuple(rule for rule in self.rules if rule.applies_to(tenant))


def load_rules(path: Path | None, label: str = "CSTP_GUARDRAILS_FILE") -> RuleSet:
    """The rules of the file at `path` (None: no rules), compiled and probed.

    Raises RulesError (a StartupError: the service does not start) naming `label`, the
    file, the rule and the fault: unreadable or not TOML; an unknown table or field; a
    duplicate id; a severity other than block or warn; an invalid tenant name; a syntax
    error, an unknown variable, a wrong type or field, a non-bool value, or a rule slow by
    construction (a2a.guardrails.expressions).
    """
    if path is None:
        return RuleSet()
    where = f"{label} {path}"
    return parse_rules(read_toml(path, where, RulesError), where)


def parse_rules(document: dict[str, Any], where: str) -> RuleSet:
    """The rules of a parsed TOML `document`; RulesError messages start with `where`."""
    tables = array_of_tables(document, "rule", where, MAX_RULES, RulesError)
    now = datetime.now(UTC)
    full, largest = full_probe(now).context(), largest_probe(now).context()
    rules: list[Rule] = []
    for n, table in enumerate(tables):
        rule = _rule(f"{where}: {_name(n, table)}", table, full, largest)
        if any(r.id == rule.id for r in rules):
            raise RulesError(f"{where}: {_name(n, table)} id: {rule.id!r} is used twice")
        rules.append(rule)
    return RuleSet(tuple(rules))


def _rule(where: str, table: dict[str, Any], full: Any, largest: Any) -> Rule:
    try:
        config = RuleConfig.model_validate(table)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "rule"
        reason = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
        raise RulesError(f"{where} {field}: {reason}") from None
    compiled: dict[str, Expression] = {}
    for field in ("when", "require"):
        try:
            compiled[field] = expression = Expression(getattr(config, field))
            expression.probe(full, largest)
        except ExpressionError as exc:
            raise RulesError(f"{where} {field}: {exc}") from None
    return Rule(
        id=config.id,
        description=config.description,
        when=compiled["when"],
        require=compiled["require"],
        severity=config.severity,
        message=config.message,
        tenants=None if config.tenants is None else frozenset(config.tenants),
    )


def _name(n: int, table: dict[str, Any]) -> str:
    rule_id = table.get("id")
    return f"rule[{n}]" + (f" ({rule_id!r})" if isinstance(rule_id, str) else "")
