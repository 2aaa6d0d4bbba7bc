"""Org-level search is fresh across replicas on `chroma run`: one listing of Chroma's
collections names the tenants and reads each one's change marker, which stands for each
tenant's freshness check (ChromaDecisionStore.collection_markers; LiveIndex.current's
`marker`). A write acknowledged by one replica is in the next org-level answer of another."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a.records import DecisionRecord
from a2a.store.chroma import ChromaDecisionStore
from tests.decisions.wire import FAST_MODEL, replica_env, result
from tests.index.helpers import write
from tests.servers import chroma_server, cstp_server
from tests.tenants.wire import ACME_TOKEN, GLOBEX_TOKEN, ROOT_TOKEN, TOKENS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """Two `cstp serve` on one `chroma run`: (writer's URL, reader's URL, Chroma's URL)."""
    folder: Path = tmp_path_factory.mktemp("org-freshness")
    with chroma_server(folder) as (chroma_url, _):
        urls = []
        with contextlib.ExitStack() as servers:
            for n in range(2):
                env = replica_env(folder / f"data{n}", chroma_url, TOKENS)
                urls.append(servers.enter_context(cstp_server(env)))
            yield urls[0], urls[1], chroma_url


def _org(url: str) -> list[tuple[str, str, str]]:
    """(tenant, id, title) of every hit of one org-level query over every tenant."""
    params = {"query": "kafka billing events", "tenant": "*", "limit": 20}
    found = result(url, "cstp.queryDecisions", params, ROOT_TOKEN)["decisions"]
    return sorted((d["tenant"], d["id"], d["title"]) for d in found)


def test_every_write_through_one_replica_is_in_the_next_org_answer_of_another(
    replicas: tuple[str, str, str],
) -> None:
    writer, reader, _ = replicas
    acme = {"id": "a1", "title": "Kafka for billing events"}
    result(writer, "cstp.recordDecision", {"decision": acme, "tenant": "acme"}, ACME_TOKEN)
    assert _org(reader) == [("acme", "a1", "Kafka for billing events")]
    globex = {"id": "g1", "title": "Kafka billing events, globex"}
    result(writer, "cstp.recordDecision", {"decision": globex, "tenant": "globex"}, GLOBEX_TOKEN)
    assert _org(reader) == [
        ("acme", "a1", "Kafka for billing events"),
        ("globex", "g1", "Kafka billing events, globex"),
    ]
    change = {"id": "a1", "changes": {"title": "Kafka for billing events, v2"}, "reason": "r"}
    result(writer, "cstp.updateDecision", {**change, "tenant": "acme"}, ACME_TOKEN)
    assert ("acme", "a1", "Kafka for billing events, v2") in _org(reader)
    gone = {"id": "g1", "reason": "a test", "tenant": "globex"}
    result(writer, "cstp.deleteDecision", gone, GLOBEX_TOKEN)
    assert _org(reader) == [("acme", "a1", "Kafka for billing events, v2")]
    # A tenant the reader never served, created through the writer.
    initech = {"decision": {"id": "i1", "title": "Kafka billing"}, "tenant": "initech"}
    result(writer, "cstp.recordDecision", initech, ROOT_TOKEN)
    assert [hit[0] for hit in _org(reader)] == ["acme", "initech"]


def test_one_listing_reads_every_collections_marker_as_revision_does(
    replicas: tuple[str, str, str], tmp_path: Path
) -> None:
    writer, _, chroma_url = replicas
    zeta = {"decision": {"id": "z1", "title": "Kafka billing"}, "tenant": "zeta"}
    result(writer, "cstp.recordDecision", zeta, ROOT_TOKEN)

    def store(name: str, **where: object) -> ChromaDecisionStore:
        return ChromaDecisionStore(collection=name, embedding_model=FAST_MODEL, **where)  # type: ignore[arg-type]

    markers = store("decisions", server_url=chroma_url).collection_markers()
    assert markers["t.zeta.decisions"]  # written: a marker
    for name, marker in markers.items():
        assert marker == store(name, server_url=chroma_url).revision(), name
    # Embedded, the markers are this process's own (in memory): the listing reads none.
    embedded = store("decisions", data_dir=tmp_path / "chroma")
    write(embedded, [DecisionRecord(id="d1", title="Kafka billing")])
    assert embedded.collection_markers() == {"decisions": None}
    assert embedded.revision()  # kept in memory, read by `revision` without a call
