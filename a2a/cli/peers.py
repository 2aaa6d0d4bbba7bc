"""`cstp peers`: the peer services a service can ask, from cstp.listPeers (CONTRACT.md,
Federation)."""

from __future__ import annotations

import json

from rich.table import Table

from a2a.cli.decisions import _client, _out
from a2a.cli.options import Connection, shared_options
from a2a.client.peers import ListPeersResult


@shared_options()
def peers(*, connection: Connection) -> None:
    """List the peer services this service can ask (cstp.listPeers, from its
    CSTP_PEERS_FILE): whether each answers now, its circuit (open: skipped for a while after
    failing) and its embedding model. Name them with --peers on `query` and `similar`."""
    with _client(connection) as client:
        result = client.list_peers()
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(result.model_dump(by_alias=True)))
        return
    if not result.peers:
        out.print("No peers configured: this service has no CSTP_PEERS_FILE.", markup=False)
        return
    out.print(peers_table(result))


def peers_table(result: ListPeersResult) -> Table:
    """One row per peer, in the peers file's order: its name, `yes`/`no` it answered its
    agent card just now, its circuit, its embedding model (`name (dimensions)`, `unknown`)
    and whether that is the service's own (distances then merge by distance, else by rank)."""
    table = Table(title=f"{len(result.peers)} peer(s)", title_justify="left")
    for name in ("peer", "reachable", "circuit", "model", "same model"):
        table.add_column(name, overflow="fold")
    for peer in result.peers:
        model = peer.embedding_model
        table.add_row(
            peer.name,
            "yes" if peer.reachable else "no",
            peer.circuit,
            "unknown" if model is None else f"{model.name} ({model.dimensions})",
            "yes" if peer.same_model else "no",
        )
    return table
