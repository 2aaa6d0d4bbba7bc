"""The client's side of federation (CONTRACT.md, Federation: searching peer services):
`peers` on the search calls, the cstp.listPeers result, and the lines that say which peers
of a federated answer are missing from it.

`peers` is a list of peer names or `"*"` (every peer the service has configured); the
service checks it (-32602 `peers[i]` for an unknown name, -32602 `peers` when it has no
peers); the client only passes it along. A federated answer carries `peers` (the block),
`merge` and `partial`, and each decision its `peer` (None: the service's own); those are
the result models' own fields (a2a.results.FederatedResult).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from a2a.results import EmbeddingModel, PeersBlock

#: The method that lists the peers; it takes no `tenant`.
LIST_PEERS: Final = "cstp.listPeers"

#: `peers` as a call sends it: peer names, or "*" for every configured peer.
PeerNames = Sequence[str] | Literal["*"]


def peers_param(peers: PeerNames | None) -> list[str] | str | None:
    """`peers` in wire form: "*" as is, names as a list; None (this service alone) as None."""
    if peers is None or peers == "*":
        return peers
    if isinstance(peers, str):  # one name given bare: a list of it, not its letters
        return [peers]
    return list(peers)


class PeerInfo(BaseModel):
    """One configured peer, as cstp.listPeers shows it: whether its agent card answered
    just now (`reachable`; False without asking while its circuit is open), its `circuit`
    (`open`: federated calls skip it until its next try), its `embedding_model` (the last
    known; None: unknown) and whether it is the service's own (`same_model`: their
    distances merge)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    name: str
    reachable: bool
    circuit: Literal["closed", "open"]
    embedding_model: EmbeddingModel | None
    same_model: bool


class ListPeersResult(BaseModel):
    """cstp.listPeers: the service's configured peers, in its peers file's order (none when
    it has no CSTP_PEERS_FILE)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    peers: list[PeerInfo]


def missing_peers(block: PeersBlock | None) -> list[str]:
    """One line per peer of a federated answer that is not in it: `peer NAME failed: message
    (error CODE)` or `peer NAME skipped: ...`, in the order asked; [] when every peer
    answered or the call asked none."""
    if block is None:
        return []
    lines = []
    for detail in block.details:
        if detail.status == "failed":
            error = detail.error
            reason = "no reason given" if error is None else f"{error.message} (error {error.code})"
            lines.append(f"peer {detail.peer} failed: {reason}")
        elif detail.status == "skipped":
            lines.append(
                f"peer {detail.peer} skipped: its circuit is open after failing calls in a row;"
                " it is tried again shortly"
            )
    return lines


def peers_summary(block: PeersBlock, merge: str | None) -> str:
    """One line saying how many peers answered and how the lists were merged:
    `peers: 1 of 2 answered (1 failed, 0 skipped); merged by rank`."""
    merged = f"; merged by {merge}" if merge else ""
    return (
        f"peers: {block.successful} of {block.total} answered"
        f" ({block.failed} failed, {block.skipped} skipped){merged}"
    )
