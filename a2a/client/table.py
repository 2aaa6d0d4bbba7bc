"""`cstp query` output: decisions as a readable rich table."""

from __future__ import annotations

from rich.table import Table

from a2a.query.results import QueryDecisionsResult


def decisions_table(result: QueryDecisionsResult) -> Table:
    """One row per decision, nearest first: distance, id, title, category, status, date."""
    table = Table(
        title=f"{result.total} decision(s) for {result.query!r} ({result.query_time_ms} ms)",
        title_justify="left",
    )
    for name in ("distance", "id", "title", "category", "stakes", "status", "conf.", "date"):
        table.add_column(name, overflow="fold", justify="right" if name == "distance" else "left")
    for d in result.decisions:
        table.add_row(
            f"{d.distance:.3f}",
            d.id,
            d.title or "",
            d.category or "",
            d.stakes or "",
            d.status or "",
            "" if d.confidence is None else f"{d.confidence:.2f}",
            (d.date or "")[:10],
        )
    return table
