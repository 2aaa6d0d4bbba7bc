"""`cstp update|delete|stats|drift`: a decision's lifecycle and the store's figures."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from a2a.cli.decisions import (
    EXIT_INPUT,
    _client,
    _out,
    err,
    read_decisions,
    summaries_table,
)
from a2a.cli.options import (
    Connection,
    Tenant,
    shared_options,
)
from a2a.rpc.protocol import to_wire

Ids = Annotated[
    list[str] | None, typer.Option(metavar="ID", help="A decision id; repeat for several.")
]


@shared_options()
def update(
    decision_id: Annotated[str, typer.Argument(metavar="ID")],
    reason: Annotated[
        str, typer.Option(metavar="WHY", help="Why it changes (kept in the history).")
    ],
    changes: Annotated[
        str | None,
        typer.Option(metavar="FILE|-", help="YAML or JSON mapping of changes, by wire name."),
    ] = None,
    title: Annotated[str | None, typer.Option(metavar="TITLE", help="New title.")] = None,
    category: Annotated[str | None, typer.Option(metavar="CATEGORY", help="New category.")] = None,
    confidence: Annotated[
        float | None, typer.Option(metavar="0..1", help="New confidence, in [0, 1].")
    ] = None,
    stakes: Annotated[
        str | None, typer.Option(metavar="low|medium|high|critical", help="New stakes.")
    ] = None,
    status: Annotated[str | None, typer.Option(metavar="STATUS", help="New status.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option(metavar="TAG", help="The tags; repeat (replaces all).")
    ] = None,
    supersedes: Ids = None,
    related_to: Ids = None,
    tenant: Tenant = None,
    *,
    connection: Connection,
) -> None:
    """Amend a decision (cstp.updateDecision, scope write); prints its summary."""
    sent: dict[str, Any] = {}
    if changes is not None:
        try:
            [sent] = read_decisions(changes)
        except ValueError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(EXIT_INPUT) from None
    options = {
        "title": title,
        "category": category,
        "confidence": confidence,
        "stakes": stakes,
        "status": status,
        "tags": tag,
        "supersedes": supersedes,
        "relatedTo": related_to,
    }
    sent.update({name: value for name, value in options.items() if value is not None})
    with _client(connection, tenant) as client:
        summary = client.update_decision(decision_id, sent, reason)
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(summary.model_dump(by_alias=True)))
    else:
        out.print(summaries_table([summary], "updated"))


@shared_options()
def delete(
    decision_id: Annotated[str, typer.Argument(metavar="ID")],
    reason: Annotated[
        str, typer.Option(metavar="WHY", help="Why it is deleted (logged, not stored).")
    ],
    tenant: Tenant = None,
    *,
    connection: Connection,
) -> None:
    """Delete a decision and its links (cstp.deleteDecision; your own, or any with admin)."""
    with _client(connection, tenant) as client:
        result = client.delete_decision(decision_id, reason)
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(to_wire(result)))
    else:
        out.print(f"{result.id} deleted")


@shared_options()
def stats(
    filters: dict[str, Any] | None = None,
    tenant: Tenant = None,
    *,
    connection: Connection,
) -> None:
    """Decision counts by month x outcome, category, status and agent (cstp.getStats)."""
    with _client(connection, tenant) as client:
        result = client.get_stats(filters)
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(to_wire(result)))
        return
    out.print(f"{result.decisions} decision(s), {result.undated} undated")
    months = Table(title="by month", title_justify="left")
    months.add_column("month")
    months.add_column("outcomes")
    for m in result.by_month:
        months.add_row(m.month, ", ".join(f"{k} {v}" for k, v in m.outcomes.items()))
    out.print(months)
    for key, rows in (
        ("category", result.by_category),
        ("status", result.by_status),
        ("agent", result.by_agent),
    ):
        listed = ", ".join(f"{r[key] or '(none)'} {r['decisions']}" for r in rows)
        out.print(f"by {key}: {listed}")


@shared_options("category", "status", "stakes")
def drift(
    recent_days: Annotated[
        int | None, typer.Option(metavar="DAYS", help="Recent window (1..365 days).")
    ] = None,
    baseline_days: Annotated[
        int | None, typer.Option(metavar="DAYS", help="Baseline window before it (1..3650 days).")
    ] = None,
    group_by: Annotated[
        str | None, typer.Option(metavar="category|agent", help="category (default) or agent.")
    ] = None,
    filters: dict[str, Any] | None = None,
    tenant: Tenant = None,
    *,
    connection: Connection,
) -> None:
    """Groups whose recent Brier score is worse than their baseline (cstp.checkDrift)."""
    with _client(connection, tenant) as client:
        result = client.check_drift(
            recent_days=recent_days, baseline_days=baseline_days, group_by=group_by, filters=filters
        )
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(to_wire(result)))
        return
    table = Table(title="calibration drift", title_justify="left")
    for name in ("group", "recent Brier", "n", "baseline Brier", "n", "drifted"):
        table.add_column(name)
    for g in result.groups:
        table.add_row(
            g.group or "(none)",
            _score(g.recent_brier),
            str(g.recent_decisions),
            _score(g.baseline_brier),
            str(g.baseline_decisions),
            "DRIFTED" if g.drifted else "",
        )
    out.print(table)


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


#: The commands by name, for the `cstp` app (a2a.cli.main) to register.
COMMANDS: dict[str, Callable[..., None]] = {
    "update": update,
    "delete": delete,
    "stats": stats,
    "drift": drift,
}
