"""`cstp export` and `cstp import` in process, over real embedded Chroma and a real `chroma
run` server (CONTRACT.md, "Moving data: export and import"): round trips of two tenants
with history and links, import twice, conflicts, --replace, bad lines, 10k records."""

from __future__ import annotations

import asyncio
import io
import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from a2a.embeddings import Embedder, load_embedder
from a2a.records import DecisionRecord, Reason
from a2a.settings import load_settings
from a2a.store.chroma import ChromaDecisionStore
from a2a.tenants.names import collection_of
from a2a.transfer.export import export
from a2a.transfer.importer import Importer, ImportSummary
from a2a.transfer.lines import line_of
from tests.conftest import SAMPLE, app_client, index_records, rpc_call
from tests.servers import chroma_server

FAST = "wordllama-l2-supercat-256"
TENANTS = ("default", "acme")


@pytest.fixture(scope="module")
def fast() -> Embedder:
    return load_embedder(FAST)


def store_of(place: Path | str, tenant: str = "default") -> ChromaDecisionStore:
    """A tenant's collection in an embedded folder (Path) or on a Chroma server (URL)."""
    collection = collection_of("decisions", tenant)
    if isinstance(place, Path):
        return ChromaDecisionStore(
            data_dir=place / "chroma", collection=collection, embedding_model=FAST
        )
    return ChromaDecisionStore(server_url=place, collection=collection, embedding_model=FAST)


def exported(store: ChromaDecisionStore) -> bytes:
    out = io.BytesIO()
    export(store, out)
    return out.getvalue()


def imported(
    store: ChromaDecisionStore, embedder: Embedder, data: bytes, **options: Any
) -> ImportSummary:
    summary = ImportSummary()
    Importer(store, embedder, **options).run(io.BytesIO(data), summary)
    return summary


def counts(summary: ImportSummary) -> tuple[int, int, int, int, int]:
    return (
        summary.created,
        summary.unchanged,
        summary.conflict,
        summary.replaced,
        len(summary.bad),
    )


async def _lifecycle(data_dir: Path, embedder: Embedder) -> None:
    """History, links both ways, a review, a delete, in two tenants, over the protocol."""
    settings = load_settings(data_dir=data_dir, embedding_model=FAST)
    async with app_client(settings, embedder) as client:

        async def call(method: str, tenant: str = "default", **params: Any) -> None:
            body = rpc_call(method, {**params, "tenant": tenant})
            answer = (await client.post("/cstp", json=body)).json()
            assert "error" not in answer, answer

        async def record(record_id: str, tenant: str = "default", **fields: Any) -> None:
            decision = {"id": record_id, "title": f"Decision {record_id}", **fields}
            await call("cstp.recordDecision", tenant, decision=decision)

        await record("p1", tags=["kafka"], confidence=0.4, context="Queues for billing.")
        await record("p2", supersedes=["p1"], relatedTo=["d01"], category="architecture")
        await call("cstp.updateDecision", id="p2", changes={"confidence": 0.8}, reason="data")
        await call("cstp.reviewDecision", id="d02", outcome="failure", lessons="Measure first.")
        await record("p3", relatedTo=["p1"])
        await call("cstp.deleteDecision", id="p3", reason="duplicate")
        await record("a1", "acme", reasons=[{"type": "analysis", "text": "Cheaper."}])
        await record("a2", "acme", relatedTo=["a1"])
        await call("cstp.updateDecision", "acme", id="a1", changes={"title": "A one"}, reason="r")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, fast: Embedder) -> dict[str, bytes]:
    """The export of each tenant of a store written by `cstp index` and over the protocol."""
    data_dir = tmp_path_factory.mktemp("source")
    files = store_of(data_dir)
    index_records(files, fast, SAMPLE)
    files.close()
    asyncio.run(_lifecycle(data_dir, fast))
    found = {}
    for tenant in TENANTS:
        store = store_of(data_dir, tenant)
        found[tenant] = exported(store)
        store.close()
    return found


def by_id(data: bytes) -> dict[str, dict[str, Any]]:
    return {line["id"]: line for line in map(json.loads, data.splitlines())}


def test_an_export_is_every_record_whole_sorted_by_id_with_history_and_links(
    source: dict[str, bytes],
) -> None:
    default = by_id(source["default"])
    assert list(default) == sorted([r.id for r in SAMPLE] + ["p1", "p2"])
    assert default["p2"]["links"] == {
        "supersedes": ["p1"],
        "supersededBy": [],
        "relatedTo": ["d01"],
    }
    assert [entry["changes"] for entry in default["p2"]["history"]] == [{"confidence": [None, 0.8]}]
    assert default["p1"]["status"] == "superseded" and default["p1"]["supersededBy"] == "p2"
    assert default["d01"]["links"]["relatedTo"] == ["p2"]
    assert (default["d02"]["outcome"], default["d02"]["lessons"]) == ("failure", "Measure first.")
    acme = by_id(source["acme"])
    assert list(acme) == ["a1", "a2"]
    assert acme["a1"]["title"] == "A one" and acme["a1"]["links"]["relatedTo"] == ["a2"]


@pytest.mark.parametrize("tenant", TENANTS)
def test_export_import_into_an_empty_store_then_export_gives_the_same_bytes(
    tmp_path: Path, fast: Embedder, source: dict[str, bytes], tenant: str
) -> None:
    target = store_of(tmp_path, tenant)
    summary = imported(target, fast, source[tenant])
    assert counts(summary) == (len(source[tenant].splitlines()), 0, 0, 0, 0)
    assert summary.exit_code == 0
    assert exported(target) == source[tenant]
    # The other tenant is untouched.
    assert exported(store_of(tmp_path, "globex")) == b""


def test_an_imported_record_is_what_get_decision_answers_and_queries_find_it(
    tmp_path: Path, fast: Embedder, source: dict[str, bytes]
) -> None:
    imported(store_of(tmp_path), fast, source["default"])
    settings = load_settings(data_dir=tmp_path, embedding_model=FAST)

    async def ask() -> tuple[dict[str, Any], list[str]]:
        async with app_client(settings, fast) as client:
            got = await client.post("/cstp", json=rpc_call("cstp.getDecision", {"id": "p2"}))
            body = rpc_call("cstp.queryDecisions", {"query": "Queues for billing", "limit": 1})
            hits = (await client.post("/cstp", json=body)).json()["result"]["decisions"]
            return got.json()["result"], [hit["id"] for hit in hits]

    decision, hits = asyncio.run(ask())
    assert decision == {**by_id(source["default"])["p2"], "tenant": "default"}
    assert hits == ["p1"]


def test_importing_twice_changes_nothing(
    tmp_path: Path, fast: Embedder, source: dict[str, bytes]
) -> None:
    target = store_of(tmp_path)
    imported(target, fast, source["default"])
    revision = target.revision()
    summary = imported(target, fast, source["default"])
    assert counts(summary) == (0, len(source["default"].splitlines()), 0, 0, 0)
    assert target.revision() == revision
    assert exported(target) == source["default"]


def test_other_content_is_a_conflict_kept_as_stored_and_replace_overwrites_it(
    tmp_path: Path, fast: Embedder, source: dict[str, bytes]
) -> None:
    target = store_of(tmp_path)
    imported(target, fast, source["default"])
    lines = source["default"].splitlines(keepends=True)
    changed = {2: {"title": "Another title"}, 4: {"confidence": 0.01}}
    for number, fields in changed.items():
        lines[number - 1] = (
            json.dumps({**json.loads(lines[number - 1]), **fields}) + "\n"
        ).encode()
    edited = b"".join(lines)
    summary = imported(target, fast, edited)
    ids = [json.loads(lines[n - 1])["id"] for n in changed]
    assert counts(summary) == (0, len(lines) - 2, 2, 0, 0)
    assert summary.conflicts == list(zip(changed, ids, strict=True))
    assert summary.exit_code == 1
    assert exported(target) == source["default"]
    replaced = imported(target, fast, edited, replace=True)
    assert counts(replaced) == (0, len(lines) - 2, 0, 2, 0)
    assert replaced.exit_code == 0
    assert by_id(exported(target)) == by_id(edited)


def test_bad_lines_are_reported_by_number_and_the_good_ones_imported(
    tmp_path: Path, fast: Embedder, source: dict[str, bytes]
) -> None:
    good = source["acme"].splitlines()  # a1, a2 (related to each other)
    target = store_of(tmp_path, "acme")
    stored = [
        DecisionRecord(id="s1", title="Stored before"),
        DecisionRecord(id="s2", title="Stored, superseded", superseded_by=["b5"]),
    ]
    target.upsert(stored, fast.embed_documents([r.title for r in stored]))
    lines = [
        good[0],  # 1
        b"{not json",  # 2
        b'{"id": "b1", "title": "Bad", "confidence": 7}',  # 3
        good[0],  # 4: a1 again
        b"",  # 5: blank, skipped
        b'{"id": "b2", "title": "T", "links": {"relatedTo": ["nowhere"]}}',  # 6
        b'{"id": "b3", "title": "T", "links": {"relatedTo": ["b2"]}}',  # 7: b2 is refused
        b'{"id": "b4", "title": "T", "links": {"relatedTo": ["a1"]}}',  # 8: a1's line: no
        good[1],  # 9
        b'{"id": "s1", "title": "T", "links": {"relatedTo": ["nowhere"]}}',  # 10: s1 stored
        b'{"id": "b5", "title": "T", "links": {"supersedes": ["s2"]}}',  # 11: s2 links back
        b'{"id": "b6", "title": "T", "links": {"supersedes": ["s1"]}}',  # 12: s1 does not
        b'{"id": "b7", "title": "T", "links": {"relatedTo": ["b8"]}}',  # 13: both ends
        b'{"id": "b8", "title": "T", "links": {"relatedTo": ["b7"]}}',  # 14
    ]
    summary = imported(target, fast, b"\n".join(lines) + b"\n")
    assert [(bad.number, [r.split(":")[0] for r in bad.reasons]) for bad in summary.bad] == [
        (2, ["line"]),
        (3, ["confidence"]),
        (4, ["id"]),
        (6, ["links.relatedTo[0]"]),
        (7, ["links.relatedTo[0]"]),
        (8, ["links.relatedTo[0]"]),
        (10, ["links.relatedTo[0]"]),
        (12, ["links.supersedes[0]"]),
    ]
    assert counts(summary) == (5, 0, 0, 0, 8)
    assert summary.exit_code == 1
    assert sorted(by_id(exported(target))) == ["a1", "a2", "b5", "b7", "b8", "s1", "s2"]


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with chroma_server(tmp_path_factory.mktemp("chroma-run")) as (url, _):
        yield url


@pytest.mark.slow
def test_round_trip_through_a_chroma_server_for_two_tenants(
    chroma_url: str, fast: Embedder, source: dict[str, bytes]
) -> None:
    for tenant in TENANTS:
        target = store_of(chroma_url, tenant)
        assert counts(imported(target, fast, source[tenant]))[0] == len(source[tenant].splitlines())
        assert exported(target) == source[tenant]
        assert counts(imported(target, fast, source[tenant]))[1] == len(source[tenant].splitlines())
        target.close()


def generated(count: int) -> list[DecisionRecord]:
    """`count` varied records with every field set, some linked."""
    rng = random.Random(7)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    words = [
        "cache",
        "queue",
        "index",
        "shard",
        "replica",
        "billing",
        "search",
        "ledger",
        "invoice",
        "audit",
    ]
    records = []
    for n in range(count):
        topic = " ".join(rng.sample(words, 3))
        # Each tenth record related to the one before, held on both ends as the service does.
        related = [f"g{n - 1:05d}"] if n % 10 == 1 else []
        related_from = [f"g{n + 1:05d}"] if n % 10 == 0 and n + 1 < count else []
        records.append(
            DecisionRecord(
                id=f"g{n:05d}",
                title=f"Use {topic} for team {n % 97}",
                category=rng.choice(["architecture", "security", "process"]),
                confidence=round(rng.random(), 3),
                stakes=rng.choice(["low", "medium", "high", "critical"]),
                status="decided",
                date=start + timedelta(hours=n),
                context=f"The {topic} path is slow.",
                decision=f"Adopt {topic}.",
                reasons=[Reason(type="analysis", text=f"Measured {n}.")],
                tags=rng.sample(words, 2),
                recorded_by="agent-g" if n % 2 else None,
                recorded_at=start + timedelta(hours=n) if n % 2 else None,
                related_to=related,
                related_from=related_from,
            )
        )
    return records


@pytest.mark.slow
def test_ten_thousand_records_import_and_export_again_the_same_bytes(
    tmp_path: Path, fast: Embedder
) -> None:
    # More than a page of every step: the export's (1,000), the import's batch (2,000),
    # Chroma's whole-store page (5,000).
    data = b"".join(line_of(record) for record in generated(10_000))
    target = store_of(tmp_path)
    assert counts(imported(target, fast, data)) == (10_000, 0, 0, 0, 0)
    assert target.count() == 10_000
    assert exported(target) == data
