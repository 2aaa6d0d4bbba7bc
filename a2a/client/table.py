"""`cstp query` output: decisions as a readable rich table."""

from __future__ import annotations

from collections import Counter

from rich.table import Table

from a2a.query.results import QueryDecisionsResult
from a2a.records.summary import DecisionMetadata


def peer_of(decision: DecisionMetadata) -> str:
    """The peer service a decision of a federated answer came from, "" for the service's
    own (`peer` null) or an answer without peers (`peer` absent)."""
    peer = decision.peer
    return peer if isinstance(peer, str) else ""


def reason_counts(reasons: list[str]) -> str:
    """Reason types with their counts, in first-seen order: "analysis, alternative x2"."""
    counts = Counter(reasons)
    return ", ".join(t if n == 1 else f"{t} x{n}" for t, n in counts.items()) or "none"


def decisions_table(
    result: QueryDecisionsResult, *, tenants: bool = False, peers: bool = False
) -> Table:
    """One row per decision, in the answer's order: its score first when the results are
    ranked by one (keyword and hybrid modes), distance, id, title, category, stakes, status,
    confidence, date, the reason types when the call asked for them (`--reasons`), each
    decision's tenant with `tenants` (a search of every tenant, `--tenant '*'`), and with
    `peers` (`--peers`) the peer service each came from (empty: this service's own). A
    federated list merged by rank says so in the title: its distances, each service's
    own, are then not in order."""
    with_reasons = any(d.reasons is not None for d in result.decisions)
    scored = any(d.score is not None for d in result.decisions)
    ranked_by = "score" if scored else "rank" if result.merge == "rank" else "distance"
    table = Table(
        title=f"{result.total} decision(s) for {result.query!r}, by {ranked_by} "
        f"({result.query_time_ms} ms)",
        title_justify="left",
    )
    columns = ["distance", "id", "title", "category", "stakes", "status", "conf.", "date"]
    extra_columns = [
        *(["reasons"] if with_reasons else []),
        *(["tenant"] if tenants else []),
        *(["peer"] if peers else []),
    ]
    for name in [*(["score"] if scored else []), *columns, *extra_columns]:
        numeric = name in ("score", "distance")
        table.add_column(name, overflow="fold", justify="right" if numeric else "left")
    for d in result.decisions:
        extra = [reason_counts(d.reasons or [])] if with_reasons else []
        extra += [d.tenant or ""] if tenants else []
        extra += [peer_of(d)] if peers else []
        score = ["" if d.score is None else f"{d.score:.4f}"] if scored else []
        table.add_row(
            *score,
            "" if d.distance is None else f"{d.distance:.3f}",
            d.id,
            d.title or "",
            d.category or "",
            d.stakes or "",
            d.status or "",
            "" if d.confidence is None else f"{d.confidence:.2f}",
            (d.date or "")[:10],
            *extra,
        )
    return table
