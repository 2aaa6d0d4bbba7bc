"""`cstp similar` and `cstp docs`: cstp.findSimilarDecisions and cstp.searchDocs from the shell.

Exit codes as every client command (a2a.cli.exit_codes): 0 answered, 1 the service returned an
error, 2 a bad option (neither or both of ID and a proposal), 5 the service is not reachable.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from a2a.cli import options
from a2a.cli.decisions import _client, _out
from a2a.cli.query import print_peers
from a2a.client import FindSimilarDecisionsResult
from a2a.client.table import peer_of
from a2a.rpc.protocol import to_wire


@options.shared_options()
def similar(
    decision_id: Annotated[
        str | None,
        typer.Argument(
            metavar="[ID]", help="A stored decision to find the like of.", show_default=False
        ),
    ] = None,
    tags: Annotated[
        list[str] | None,
        typer.Option("--tag", metavar="TAG", help="A tag of the proposal; repeatable."),
    ] = None,
    proposal_category: Annotated[
        str | None,
        typer.Option("--proposal-category", metavar="NAME", help="The proposal's category."),
    ] = None,
    proposal_stakes: Annotated[
        options.StakesValue | None,
        typer.Option("--proposal-stakes", metavar="STAKES", help="The proposal's stakes."),
    ] = None,
    filters: dict[str, Any] | None = None,
    limit: Annotated[
        int | None, typer.Option(metavar="1..50", help="Most decisions returned (default 10).")
    ] = None,
    tenant: options.TenantOrEvery = None,
    peers: options.PeerList = None,
    *,
    connection: options.Connection,
) -> None:
    """Decisions like a stored one (ID) or a proposal (--tag, --proposal-category,
    --proposal-stakes), by tags, category and stakes (cstp.findSimilarDecisions). With
    --peers (a proposal only), its peer services are asked too, merged by rank."""
    proposal: dict[str, Any] = {
        k: v
        for k, v in {
            "tags": tags or None,
            "category": proposal_category,
            "stakes": None if proposal_stakes is None else str(proposal_stakes),
        }.items()
        if v is not None
    }
    if (decision_id is None) == (not proposal):
        raise typer.BadParameter(
            "give a decision ID or a proposal (--tag, --proposal-category, --proposal-stakes),"
            " not both",
            param_hint="ID",
        )
    with _client(connection, tenant) as client:
        result = client.find_similar_decisions(
            proposal or None, decision_id, filters, limit, peers=peers
        )
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(to_wire(result)))
        return
    if result.reason:
        out.print(f"No similar decision: {result.reason}.", markup=False)
    out.print(similar_table(result, tenants=tenant == "*", peers=peers is not None))
    print_peers(result, out)


def similar_table(
    result: FindSimilarDecisionsResult, *, tenants: bool = False, peers: bool = False
) -> Table:
    """One row per decision, most similar first: score, id, title, category, stakes, tags,
    each decision's tenant with `tenants` (`--tenant '*'`), and the peer service it came
    from with `peers` (`--peers`; empty: this service's own)."""
    table = Table(
        title=f"{result.total} similar decision(s) ({result.query_time_ms} ms)",
        title_justify="left",
    )
    columns = ("score", "id", "title", "category", "stakes", "status", "tags")
    extra = (*(("tenant",) if tenants else ()), *(("peer",) if peers else ()))
    for name in (*columns, *extra):
        table.add_column(name, overflow="fold", justify="right" if name == "score" else "left")
    for d in result.decisions:
        table.add_row(
            f"{d.score:.3f}",
            d.id,
            d.title or "",
            d.category or "",
            d.stakes or "",
            d.status or "",
            ", ".join(d.tags),
            *([d.tenant or ""] if tenants else []),
            *([peer_of(d)] if peers else []),
        )
    return table


@options.shared_options()
def docs(
    text: Annotated[str, typer.Argument(metavar="QUERY", help="What to look up, in words.")],
    max_sections: Annotated[
        int | None,
        typer.Option(metavar="1..10", help="Most sections returned (default 3)."),
    ] = None,
    *,
    connection: options.Connection,
) -> None:
    """Search the operator guide (cstp.searchDocs) and print the matching sections."""
    from rich.markdown import Markdown  # markdown-it, for this command only

    with _client(connection) as client:
        result = client.search_docs(text, max_sections)
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(result.model_dump(mode="json")))
        return
    if not result.sections:
        out.print("No section of the guide matches.", markup=False)
    for section in result.sections:
        out.rule(f"{section.doc_title} — {section.heading}", align="left")
        out.print(Markdown(section.content))
    if result.suggested_followups:
        out.print("Follow-ups: " + "; ".join(result.suggested_followups), markup=False)
