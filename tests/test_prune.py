"""`cstp index --prune`: stale file records go, protocol records and unreadable files stay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from a2a.decisions.params import RecordDecisionParams
from a2a.decisions.service import DecisionService
from a2a.decisions.table import StoreTable
from a2a.embeddings import Embedder
from a2a.ingest.indexer import Indexer, IndexSummary
from a2a.ingest.prune import Corpus, PruneRefused, prune, read_corpus, stale_ids
from a2a.settings import Settings
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import decode
from tests.servers import cstp

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
    assert stale_ids([decode(record_id, metadata)], CORPUS) == ([record_id] if stale else [])


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


async def test_prune_removes_gone_files_and_records_and_keeps_protocol_records(
    tmp_path: Path, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    folder = tmp_path / "decisions"
    write_folder(folder, FILES)
    indexer = Indexer(store, embedder)
    summary = IndexSummary()
    indexer.write(indexer.load([folder], summary), summary)
    async_store = AsyncStore(store, timeout_seconds=30)
    service = DecisionService(async_store, embedder, StoreTable(async_store))
    params = RecordDecisionParams.model_validate({"decision": {"id": "p1", "title": "Spoken"}})
    await service.record_decision(params, "planner")
    # a2 leaves a.yaml, b.yaml is deleted, c.yaml stops parsing.
    write_folder(
        folder,
        {"a.yaml": "- id: a1\n  title: First in a\n", "c.yaml": "id: [unclosed\n"},
    )
    summary = prune(store, read_corpus(indexer, [folder]))
    assert sorted(summary.removed) == ["a2", "b1"]
    assert sorted(row.id for row in store.get(metadata=False)) == ["a1", "c1", "p1"]


def test_prune_refuses_a_missing_folder(
    tmp_path: Path, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    with pytest.raises(PruneRefused):
        read_corpus(Indexer(store, embedder), [tmp_path / "nowhere"])


@pytest.mark.slow
def test_cstp_index_prune_reports_how_many_it_removed(tmp_path: Path, settings: Settings) -> None:
    folder = tmp_path / "decisions"
    write_folder(folder, FILES)
    env = {
        "CSTP_DATA_DIR": str(tmp_path / "data"),
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
    }
    assert cstp("index", str(folder), env=env).returncode == 0
    write_folder(folder, {"a.yaml": FILES["a.yaml"]})
    done = cstp("index", "--prune", str(folder), env=env)
    assert done.returncode == 0, done.stderr
    assert "pruned 2 record(s)" in done.stderr
    again = cstp("index", "--prune", str(folder), env=env)
    assert "pruned 0 record(s)" in again.stderr
