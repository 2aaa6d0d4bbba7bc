"""`cstp guardrails check|test` (the rule author's tools, no server) and `cstp guard` (a
proposal checked by a running service, cstp.checkGuardrails), with exit codes a script
can branch on:

- `guard`: 0 allow, 6 warn, 7 block; 1 the service answered an error, 2 a bad option or
  proposal, 5 the service is not reachable;
- `guardrails check`: 0 the file is good, 2 it is not (the rule and the fault printed);
- `guardrails test`: 0 every case passed, 1 some differ (each named, as `opa test`), 2 the
  rules or a case cannot be used.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Final

import typer
from rich.markup import escape
from rich.table import Table

from a2a.cli import exit_codes, options
from a2a.cli.decisions import _client, _out, err
from a2a.errors import SettingsError

#: `cstp guard`'s exit code per verdict (a2a.cli.exit_codes).
VERDICT_EXIT: Final = {
    "allow": exit_codes.OK,
    "warn": exit_codes.GUARD_WARN,
    "block": exit_codes.GUARD_BLOCK,
}

guardrails = typer.Typer(
    name="guardrails",
    help="Validate and test guardrail rules, no server.\n\nThe rules file is CSTP_GUARDRAILS_FILE's"
    " (docs/guardrails.md).",
    short_help="Validate and test guardrail rules, no server.",
    no_args_is_help=True,
    add_completion=False,
)


@guardrails.command("check")
def check(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The rules file (TOML).")],
) -> None:
    """Compile every rule of FILE as `cstp serve` does at start; exit 2 naming the rule and
    the fault (syntax, unknown variable, wrong type, duplicate id, severity, tenant)."""
    from a2a.app.guard_methods import check_rules_file  # not for every command: it loads the store

    try:
        rules = check_rules_file(file)
    except SettingsError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(exit_codes.SETTINGS) from None
    print(f"{file}: {len(rules.rules)} rule(s), all valid")


@guardrails.command("test")
def test(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The rules file (TOML).")],
    cases: Annotated[
        Path, typer.Argument(metavar="CASES", help="Test cases, JSON Lines (docs/guardrails.md).")
    ],
) -> None:
    """Run each case of CASES (a proposal, precedents, calibration and the expected verdict
    and rule ids) against FILE; exit 1 naming each case that differs."""
    from a2a.app.guard_methods import check_rules_file, run_rule_cases

    try:
        rules = check_rules_file(file)
        results = run_rule_cases(rules, cases.read_text(encoding="utf-8").splitlines())
    except (SettingsError, OSError, UnicodeDecodeError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(exit_codes.SETTINGS) from None
    failed = [r for r in results if not r.passed]
    for result in failed:
        print(f"FAIL {result.describe()}")
    print(f"{len(results) - len(failed)}/{len(results)} case(s) passed")
    if failed:
        raise typer.Exit(exit_codes.FAILED)


@options.shared_options()
def guard(
    source: Annotated[
        str | None,
        typer.Argument(
            metavar="[-]",
            help="`-` reads the proposal (a JSON object) from stdin instead of the options.",
            show_default=False,
        ),
    ] = None,
    title: Annotated[str | None, typer.Option(metavar="TITLE", help="What is proposed.")] = None,
    category: Annotated[str | None, typer.Option(metavar="NAME")] = None,
    stakes: Annotated[options.StakesValue | None, typer.Option(metavar="STAKES")] = None,
    confidence: Annotated[float | None, typer.Option(metavar="0..1")] = None,
    context: Annotated[
        str | None, typer.Option(metavar="WHY", help="The situation it answers.")
    ] = None,
    tags: Annotated[
        list[str] | None, typer.Option("--tag", metavar="TAG", help="A tag; repeatable.")
    ] = None,
    tenant: options.Tenant = None,
    *,
    connection: options.Connection,
) -> None:
    """Check a proposal against the service's guardrails (cstp.checkGuardrails) before
    acting. Exit 0 allow, 6 warn, 7 block (1 the service answered an error, 2 a bad
    option, 5 not reachable)."""
    proposal = _proposal(source, title, category, stakes, confidence, context, tags)
    with _client(connection, tenant) as client:
        result = client.call("cstp.checkGuardrails", {"proposal": proposal})
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(result))
    else:
        out.print(f"verdict: {result['verdict']} ({result['evaluated']} rule(s))", markup=False)
        for v in result["violations"]:
            out.print(f"  {v['severity']}: {v['rule']}: {v['message']}", markup=False)
        out.print(precedents_table(result["precedents"]))
    raise typer.Exit(VERDICT_EXIT[result["verdict"]])


def _proposal(source: str | None, title: str | None, *fields: Any) -> dict[str, Any]:
    category, stakes, confidence, context, tags = fields
    if source is not None:
        if source != "-" or title is not None or any(f is not None for f in fields):
            raise typer.BadParameter("give `-` (a proposal on stdin) or the options, not both")
        try:
            proposal = json.loads(sys.stdin.read())
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"stdin is not JSON ({exc.msg})") from None
        if not isinstance(proposal, dict):
            raise typer.BadParameter("stdin must hold a JSON object (the proposal)")
        return proposal
    if title is None:
        raise typer.BadParameter("give --title (or `-` and a proposal on stdin)")
    given = {
        "title": title,
        "category": category,
        "stakes": None if stakes is None else str(stakes),
        "confidence": confidence,
        "context": context,
        "tags": tags or None,
    }
    return {k: v for k, v in given.items() if v is not None}


def precedents_table(precedents: list[dict[str, Any]]) -> Table:
    """The precedents of a check, closest first: distance, id, title, outcome, date."""
    table = Table(title=f"{len(precedents)} precedent(s)", title_justify="left")
    for name in ("distance", "id", "title", "outcome", "date"):
        table.add_column(name, overflow="fold")
    for p in precedents:
        row = (f"{p['distance']:.3f}", p["id"], p.get("title") or "", p.get("outcome") or "")
        table.add_row(*row, p.get("date") or "")
    return table
