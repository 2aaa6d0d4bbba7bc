"""The index keeps its rows in columns: every field back as written, through snapshots,
writes after a snapshot's load and compaction; no Python object per row; an honest size."""

from __future__ import annotations

import gc
import json
import logging
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from a2a.index import IndexedRecord, SearchIndex
from a2a.index.search_index import MIN_COMPACT
from a2a.index.snapshot import CURRENT, MANIFEST, SnapshotStamp, load_index, write_snapshot
from a2a.index.sync import LiveIndex
from a2a.records import DecisionRecord, Reason
from a2a.records.dates import date_text
from a2a.records.summary import SUMMARY_FIELDS, summary_fields
from a2a.store.chroma import ChromaDecisionStore
from tests.index.helpers import unit_vectors

DIM = 8
MODEL = "test-model"


#: Every column the index keeps of a record.
COLUMNS = (
    "id",
    *SUMMARY_FIELDS,
    "date_epoch",
    "recorded_at",
    "reviewed_at",
    "tags",
    "reason_types",
    "content_hash",
    "updated_at",
)


def _decision(n: int, version: int = 0) -> DecisionRecord:
    """Every stored field, some absent, some non-ASCII, lists of 0-3 items."""
    day = datetime(2026, 1, 1 + n % 28, 10, tzinfo=UTC)
    return DecisionRecord(
        id=f"d{n:05d}",
        title=f"Décision {n % 20} v{version} — ünïcode",
        category=("architecture", "security", None)[n % 3],
        confidence=None if n % 7 == 0 else (n % 10) / 10,
        stakes=("low", "medium", "high", "critical")[n % 4],
        status=("decided", "reviewed")[n % 2],
        outcome=None if n % 5 else "success",
        date=None if n % 13 == 0 else day,
        source=("file", "rpc", None)[n % 3],
        recorded_by=f"agent-{n % 4}",
        recorded_at=datetime(2026, 2, 1, 0, 0, n % 60, tzinfo=UTC),
        reviewed_at=None if n % 2 == 0 else datetime(2026, 3, 1, tzinfo=UTC),
        tags=[f"Tag{t}" for t in range(n % 4)],
        reasons=[Reason(type=t) for t in ("analysis", "pattern")[: n % 3]],
        origin_hash=f"{n:064x}",
    )


def _updated_at(n: int) -> int | None:
    return None if n % 17 == 0 else 1_700_000_000_000 + n


def _columns(n: int) -> tuple[Any, ...]:
    """What the index should read back of `_decision(n)`, column by column (COLUMNS)."""
    record = _decision(n)
    return (
        *summary_fields(record).values(),
        record.date_epoch,
        date_text(record.recorded_at),
        date_text(record.reviewed_at),
        tuple(record.tags),
        tuple(record.reason_types),
        record.origin_hash,
        _updated_at(n),
    )


def _records(numbers: range | list[int], version: int = 0) -> list[IndexedRecord]:
    vectors = unit_vectors(len(numbers), DIM, seed=version)
    return [
        IndexedRecord(
            d.id, d, vectors[i], f"{d.title} postgres migration {d.stakes}", _updated_at(n)
        )
        for i, (n, d) in enumerate((n, _decision(n, version)) for n in numbers)
    ]


def _everything(index: SearchIndex) -> dict[str, Any]:
    """What every read of the index gives for every current row, and a few searches."""
    with index.reading():
        rows = np.flatnonzero(index.mask(None)).tolist()
        query = unit_vectors(1, DIM, seed=99)[0]
        mask = index.mask(None)
        return {
            "records": sorted(zip(*index.fields(rows, COLUMNS), strict=True)),
            "shown": sorted(index.shown(rows)),
            "reasons": sorted(zip(index.ids.ids(rows), index.reason_types(rows), strict=True)),
            "semantic": [(m.id, m.distance) for m in index.semantic(query, mask, 10)],
            "keyword": [(m.id, m.score) for m in index.keyword("postgres critical", mask, 10)],
            "similar": _similar(index, mask),
            "hash": index.content_hash("d00042"),
            "updated": index.updated_at("d00042"),
        }


def _similar(index: SearchIndex, mask: np.ndarray) -> list[tuple[str, float]]:
    rows, scores, _, _ = index.similar(frozenset({"tag1"}), "security", None, mask)
    return [(index.id_of(r), s) for r, s in zip(rows.tolist(), scores.tolist(), strict=True)]


def test_every_field_reads_back_as_written_and_through_a_snapshot(tmp_path: Path) -> None:
    index = SearchIndex(graph_min_rows=None)
    index.upsert(_records(range(500)))
    with index.reading():
        read = list(zip(*index.fields(list(range(500)), COLUMNS), strict=True))
        assert read == [_columns(n) for n in range(500)]
    stamp = SnapshotStamp(revision="r", watermark_ms=0, model=MODEL, dimension=DIM)
    write_snapshot(index, stamp, tmp_path)
    loaded = load_index(tmp_path, model=MODEL, dimension=DIM, graph_min_rows=None)
    assert loaded is not None
    restored = loaded[0]
    assert _everything(restored) == _everything(index)
    # Writes after the load (mapped columns: appends, tombstones, updates) and a compaction
    # leave both indexes alike.
    for each in (index, restored):
        each.upsert(_records(range(480, 520), version=1))
        each.remove([f"d{n:05d}" for n in range(0, 60, 3)])
        assert _everything(each)["records"][0][0] == "d00001"
    assert _everything(restored) == _everything(index)
    for each in (index, restored):
        each.remove([f"d{n:05d}" for n in range(100, 100 + MIN_COMPACT)])
        each.upsert(_records(range(2000, 2000 + MIN_COMPACT), version=2))
        each.remove([f"d{n:05d}" for n in range(2000, 2000 + 3 * MIN_COMPACT // 4)])
        assert len(each) < 500 + 40 + MIN_COMPACT  # compacted: rows renumbered
        each.upsert(_records(range(600, 650), version=3))
    assert _everything(restored) == _everything(index)


def _tracked(root: object) -> int:
    """Objects the garbage collector tracks that are reachable from `root` (numpy arrays'
    buffers are not objects; classes and modules are not walked)."""
    seen: set[int] = set()
    stack, tracked = [root], 0
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, type | np.ndarray):
            continue
        seen.add(id(item))
        tracked += gc.is_tracked(item)
        stack.extend(gc.get_referents(item))
        if hasattr(item, "__dict__"):
            stack.append(vars(item))
        for klass in type(item).__mro__:
            stack.extend(
                getattr(item, s) for s in getattr(klass, "__slots__", ()) if hasattr(item, s)
            )
    return tracked


@pytest.mark.parametrize("size", [1000, 4000])
def test_no_python_object_per_row_for_the_collector_to_walk(size: int, tmp_path: Path) -> None:
    """A full collection walks every tracked object: rows kept as tuples and lists made it
    ~50 ms at 100k records, growing with the store. Rows are columns now: the objects the
    collector tracks do not grow with the rows, loaded or restored."""
    index = SearchIndex(graph_min_rows=None)
    for start in range(0, size, 500):
        index.upsert(_records(range(start, start + 500)))
    stamp = SnapshotStamp(revision="r", watermark_ms=0, model=MODEL, dimension=DIM)
    write_snapshot(index, stamp, tmp_path)
    loaded = load_index(tmp_path, model=MODEL, dimension=DIM, graph_min_rows=None)
    assert loaded is not None
    for each in (index, loaded[0]):
        state = {k: v for k, v in vars(each).items() if k not in {"lock", "_masks"}}
        # Per term and per tag (a few dozen here), never per row.
        assert _tracked(state) < 200


def test_memory_bytes_is_within_a_quarter_of_what_the_index_allocates() -> None:
    """`memory_bytes()` (what tenants are evicted by) against tracemalloc's count of what
    building the index allocated and kept (numpy reports its buffers to tracemalloc)."""
    records = _records(range(20_000))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index = SearchIndex(graph_min_rows=None)
        for start in range(0, len(records), 1000):
            index.upsert(records[start : start + 1000])
        index.warm()
        gc.collect()
        allocated = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    estimate = index.memory_bytes()
    assert 0.75 * allocated <= estimate <= 1.25 * allocated, (estimate, allocated)
    index.upsert(_records(range(20_000, 21_000)))
    assert index.memory_bytes() > estimate


async def test_a_snapshot_of_the_previous_format_is_refused_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = ChromaDecisionStore(
        data_dir=tmp_path / "chroma", collection="former", embedding_model=MODEL
    )
    store.upsert(
        [DecisionRecord(id=f"d{i}", title=f"Decision {i}") for i in range(20)],
        unit_vectors(20, DIM, seed=1),
    )
    snapshots = tmp_path / "snapshots"

    def live() -> LiveIndex:
        return LiveIndex(store, snapshots=snapshots, model=MODEL, dimension=DIM)

    first = live()
    await first.current()
    await first.stop()
    folder = snapshots / (snapshots / CURRENT).read_text()
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["format"] = 1  # what a replica of the pickling version wrote
    (folder / MANIFEST).write_text(json.dumps(manifest))
    caplog.set_level(logging.INFO, logger="a2a.index.sync")
    second = live()
    index = await second.current()
    await second.stop()
    assert "is of format 1, this version reads 2" in caplog.text
    assert "rebuilding from Chroma" in caplog.text
    assert index.alive_count == 20
    # The rebuild replaced it with a snapshot of this format.
    assert load_index(snapshots, model=MODEL, dimension=DIM) is not None
    store.close()


def test_writes_after_a_snapshot_start_land_in_its_spare_rows(tmp_path: Path) -> None:
    """A snapshot's columns carry spare rows, so the first writes after a start fill
    mapped pages instead of copying every column into memory (each grew by half again)."""
    index = SearchIndex(graph_min_rows=None)
    index.upsert(_records(range(8000)))
    stamp = SnapshotStamp(revision="r", watermark_ms=0, model=MODEL, dimension=DIM)
    write_snapshot(index, stamp, tmp_path)
    loaded = load_index(tmp_path, model=MODEL, dimension=DIM, graph_min_rows=None)
    assert loaded is not None
    restored = loaded[0]
    before = _row_columns(restored)
    restored.upsert(_records(range(9000, 9100)))
    restored.remove(["d00001"])
    # No row column was reallocated (only the postings of the terms and tags written are
    # copied out of the mapping, each grown to twice its rows).
    assert _row_columns(restored) == before
    with restored.reading():
        row = restored.row_of("d09050")
        assert row is not None
        assert next(zip(*restored.fields([row], COLUMNS), strict=True)) == _columns(9050)


def _row_columns(index: SearchIndex) -> int:
    """Bytes of the index's per-row columns, spare capacity included."""
    columns = [index._ids, index._updated_at, *index._text.values(), *index._lists.values()]
    rows = sum(column.nbytes for column in columns)
    return rows + index.columns.nbytes + index._vectors.nbytes
