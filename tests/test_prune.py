"""`cstp index --prune`: stale file records go, protocol records and unreadable files stay."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from a2a.decisions.params import RecordDecisionParams, UpdateDecisionParams
from a2a.decisions.service import DecisionService
from a2a.decisions.table import StoreTable
from a2a.embeddings import Embedder
from a2a.errors import PruneRefused
from a2a.index.snapshot import load_index
from a2a.ingest.indexer import Indexer, IndexSummary
from a2a.ingest.prune import Corpus, corpus_of, prune, stale_ids
from a2a.records import DecisionRecord
from a2a.settings import Settings
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import decode
from tests.servers import cstp

FAST = "wordllama-l2-supercat-256"
CORPUS = Corpus(
    files=frozenset({"a.yaml", "b.md", "broken.yaml"}),
    ids_by_source={"a.yaml": frozenset({"a1", "a2"}), "b.md": frozenset({"b"})},
    unreadable=frozenset({"broken.yaml"}),
)


@pytest.mark.parametrize(
    ("record_id", "metadata", "stale"),
    [
        ("a1", {"source": "a.yaml"}, False),
        ("a3", {"source": "a.yaml"}, True),
        ("b", {"source": "b.md"}, False),
        ("gone", {"source": "gone.yaml"}, True),
        ("x", {"source": "broken.yaml"}, False),
        ("p", {"recorded_by": "planner"}, False),
        ("p2", {"source": "gone.yaml", "recorded_by": "planner"}, False),
        ("nosource", {}, False),
    ],
    ids=[
        "still-in-file",
        "record-gone-from-file",
        "adr-still-there",
        "file-gone",
        "file-unreadable",
        "recorded-over-protocol",
        "recorded-over-protocol-with-source",
        "no-source",
    ],
)
def test_stale_ids(record_id: str, metadata: dict[str, Any], stale: bool) -> None:
    assert stale_ids([decode(record_id, metadata)[0]], CORPUS) == ([record_id] if stale else [])


def read_corpus(paths: list[Path]) -> Corpus:
    """The corpus of `paths` as `cstp index --prune` builds it: loaded, then `corpus_of`."""
    summary = IndexSummary()
    return corpus_of(paths, Indexer.load(paths, summary), summary.failures)


def snapshot_ids(data: Path) -> list[str]:
    """The ids of the current records in the snapshot `cstp index` left in `data`."""
    loaded = load_index(data / "index" / "decisions", model=FAST, dimension=None)
    assert loaded is not None
    index = loaded[0]
    assert index.graph is not None
    with index.reading():
        return sorted(index.id_of(int(row)) for row in np.flatnonzero(index.mask(None)))


def write_folder(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


FILES = {
    "a.yaml": "- id: a1\n  title: First in a\n- id: a2\n  title: Second in a\n",
    "b.yaml": "id: b1\ntitle: Only in b\n",
    "c.yaml": "id: c1\ntitle: Only in c\n",
}


def indexed(folder: Path, store: ChromaDecisionStore, embedder: Embedder) -> DecisionService:
    """FILES written to `folder` and indexed into `store`; a service on it."""
    write_folder(folder, FILES)
    summary = IndexSummary()
    Indexer(store, embedder).write(Indexer.load([folder], summary), summary)
    async_store = AsyncStore(store, timeout_seconds=30)
    return DecisionService(async_store, embedder, StoreTable(async_store))


async def test_prune_removes_gone_files_and_records_and_keeps_protocol_records(
    tmp_path: Path, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    folder = tmp_path / "decisions"
    service = indexed(folder, store, embedder)
    params = RecordDecisionParams.model_validate({"decision": {"id": "p1", "title": "Spoken"}})
    await service.record_decision(params, "planner")
    # a2 leaves a.yaml, b.yaml is deleted, c.yaml stops parsing.
    write_folder(
        folder,
        {"a.yaml": "- id: a1\n  title: First in a\n", "c.yaml": "id: [unclosed\n"},
    )
    pruned = prune(store, read_corpus([folder]))
    assert sorted(pruned.removed) == ["a2", "b1"]
    assert sorted(row.id for row in store.get(metadata=False)) == ["a1", "c1", "p1"]


async def test_a_pruned_record_leaves_no_link_behind_and_its_superseded_one_recovers(
    tmp_path: Path, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    """Reported: prune removed records without unlinking them, so decisions kept pointing at
    removed ids, and one superseded by a removed record stayed `superseded`."""
    folder = tmp_path / "decisions"
    service = indexed(folder, store, embedder)
    spoken = {"id": "p1", "title": "Spoken", "supersedes": ["c1"], "relatedTo": ["b1"]}
    await service.record_decision(RecordDecisionParams.model_validate({"decision": spoken}), "a")
    link = {"id": "b1", "changes": {"supersedes": ["a1"]}, "reason": "b replaces a1"}
    await service.update_decision(UpdateDecisionParams.model_validate(link), "a")
    (vector,) = next(store.pages(ids=["p1"], embeddings=True)).embeddings  # type: ignore[misc]
    assert linked(store, "a1").status == "superseded"

    # b.yaml and c.yaml leave the folder: b1 and c1 go, with every link to them.
    write_folder(folder, {"a.yaml": FILES["a.yaml"]})
    at = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    pruned = prune(store, read_corpus([folder]), clock=lambda: at)
    assert sorted(pruned.removed) == ["b1", "c1"]
    assert sorted(row.id for row in store.get(metadata=False)) == ["a1", "a2", "p1"]
    p1, a1 = linked(store, "p1"), linked(store, "a1")
    assert (p1.title, p1.supersedes, p1.related_to) == ("Spoken", [], [])
    assert (a1.status, a1.superseded_by) == (None, [])  # a1.yaml gives no status
    assert a1.history[-1].model_dump() == {
        "at": at,
        "by": None,
        "reason": "no longer superseded by b1",
        "changes": {"supersededBy": (["b1"], []), "status": ("superseded", None)},
    }
    # Rewritten with the vector it had: its text did not change.
    (kept,) = next(store.pages(ids=["p1"], embeddings=True)).embeddings  # type: ignore[misc]
    np.testing.assert_array_equal(kept, vector)


def linked(store: ChromaDecisionStore, record_id: str) -> DecisionRecord:
    (row,) = store.get(ids=[record_id])
    return row.decision


def test_prune_refuses_a_missing_folder_and_removes_nothing(
    tmp_path: Path, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    folder = tmp_path / "decisions"
    indexed(folder, store, embedder)
    write_folder(folder, {"a.yaml": FILES["a.yaml"]})  # b1 and c1 would be stale
    with pytest.raises(PruneRefused, match=r"not pruning: .*nowhere.*no such file"):
        prune(store, read_corpus([folder, tmp_path / "nowhere"]))
    assert sorted(row.id for row in store.get(metadata=False)) == ["a1", "a2", "b1", "c1"]


@pytest.mark.slow
def test_cstp_index_prune_reports_how_many_it_removed(tmp_path: Path, settings: Settings) -> None:
    folder = tmp_path / "decisions"
    write_folder(folder, FILES)
    env = {
        "CSTP_DATA_DIR": str(tmp_path / "data"),
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
        # The run keeps its search index and leaves a snapshot (a2a.app.kept_index).
        "CSTP_INDEX_SNAPSHOT_MIN_RECORDS": "1",
        "CSTP_INDEX_GRAPH_MIN_ROWS": "1",
    }
    assert cstp("index", str(folder), env=env).returncode == 0
    assert snapshot_ids(tmp_path / "data") == ["a1", "a2", "b1", "c1"]
    write_folder(folder, {"a.yaml": FILES["a.yaml"]})
    done = cstp("index", "--prune", str(folder), env=env)
    assert done.returncode == 0, done.stderr
    assert "pruned 2 record(s)" in done.stderr
    # The snapshot it left holds what Chroma does after the prune.
    assert snapshot_ids(tmp_path / "data") == ["a1", "a2"]
    again = cstp("index", "--prune", str(folder), env=env)
    assert "pruned 0 record(s)" in again.stderr
    # A path it cannot read: the rest is indexed, nothing is pruned, and it says why.
    write_folder(folder, {"b.yaml": FILES["b.yaml"]})
    refused = cstp("index", "--prune", str(folder), str(tmp_path / "nowhere"), env=env)
    assert refused.returncode == 1, refused.stderr
    assert ": 1 new, 0 updated, 0 unchanged, 1 failed" in refused.stderr
    assert "not pruning: " in refused.stderr and "nowhere: no such file" in refused.stderr
    # a1 and a2 were kept by the refused run: this one finds them stale.
    last = cstp("index", "--prune", str(folder), env=env)
    assert ": 0 new, 0 updated, 1 unchanged, 0 failed" in last.stderr
    assert "pruned 2 record(s)" in last.stderr
