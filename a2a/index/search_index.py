"""SearchIndex: every stored decision in memory, searchable by meaning, keywords, structure."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from a2a.index import breadth_table
from a2a.index.bm25 import BM25Index
from a2a.index.columns import BoolArray, FilterColumns
from a2a.index.fields import FieldWeights, weighted_terms
from a2a.index.graph import NEIGHBOURS, GraphIndex
from a2a.index.mask_cache import MaskCache, Selection
from a2a.index.rwlock import ReadWriteLock
from a2a.index.stored_fields import IdColumn, IntColumn, ListColumn, StringColumn
from a2a.index.tags import TagIndex
from a2a.index.tokens import analyze_query
from a2a.index.topk import DECIMALS, REACH, top_k
from a2a.index.vectors import VectorDtype, VectorMatrix
from a2a.records import DecisionRecord, normalize_tags
from a2a.records.dates import date_text
from a2a.records.filters import QueryFilters
from a2a.records.summary import SUMMARY_FIELDS, DecisionMetadata

#: Up to this many passing rows, a semantic search scores each of them exactly (float64 from
#: float32) in one step; past it, a float32 scan first and only the rows near the k-th
#: best again exactly. Crossover ~512 rows of 256-d here; 113 rows: ~32 us against ~42.
EXACT_AT_MOST = 256
#: Compact when tombstoned rows pass this fraction of all rows (and MIN_COMPACT rows).
COMPACT_FRACTION = 0.25
MIN_COMPACT = 1024
#: The planner (Qdrant's, in spirit): a semantic search walks the HNSW graph
#: (a2a.index.graph) only when the index holds at least GRAPH_MIN_ROWS records and at least
#: GRAPH_MIN_FRACTION of them pass the filter; elsewhere it scans exactly. Below these an
#: exact scan is as fast, and a filter passing few rows cuts the graph into pieces a walk
#: cannot cross (recall fell to 0.04-0.5). Measured with bench/graph_bench.py
#: (docs/scaling-measurements-graph.md).
GRAPH_MIN_ROWS = 50_000
#: Org-level search (a2a.app.org: many stores per call, each scan reading all its vectors
#: from memory) walks a store's graph from this many records; a store builds its graph once
#: it holds this many (or `graph_min_rows`, if fewer). A store searched alone scans below
#: GRAPH_MIN_ROWS, where a warm scan costs what a walk does (docs/scaling.md, Small stores).
ORG_GRAPH_MIN_ROWS = 5_000
GRAPH_MIN_FRACTION = 0.2
#: Candidates the graph proposes per result wanted (at least GRAPH_MIN_CANDIDATES), all
#: scored again exactly. The breadth of the walk (efSearch) is measured, not a formula:
#: a2a.index.breadth_table holds, per store size and share of rows passing, the smallest
#: efSearch that kept recall@10 >= 0.99 against exact search (bench/walk_bench.py
#: --calibrate writes it); `walk_breadth` reads it. Past its largest size the breadth grows
#: as (1 + GRAPH_BREADTH_GROWTH x log10(rows / 100,000)) does (the 1M sweeps of
#: docs/scaling-measurements-graph.md), at most GRAPH_MAX_BREADTH.
GRAPH_CANDIDATES_PER_RESULT = 2
GRAPH_MIN_CANDIDATES = 40
GRAPH_BREADTH_GROWTH = 1.67
GRAPH_MAX_BREADTH = 2048
#: Rows a graph build adds between two checks for a stop (SearchIndex.build_graph): ~0.5 s
#: of one core here at 300k rows.
BUILD_STEP_ROWS = 4096
#: The files of a partial graph in a snapshot (SearchIndex.persist, `partial_graph`).
PARTIAL_GRAPH = "graph-partial"
#: The string columns, each read from a record so (the coded and numeric ones: the filter
#: columns, FilterColumns.append): dates as RFC 3339 UTC text, `content_hash` the stored one.
_TEXT_COLUMNS: dict[str, Callable[[DecisionRecord], str | None]] = {
    "title": lambda r: r.title,
    "date": lambda r: date_text(r.date),
    "source": lambda r: r.source,
    "content_hash": lambda r: r.origin_hash or r.content_hash(),
    "recorded_at": lambda r: date_text(r.recorded_at),
    "reviewed_at": lambda r: date_text(r.reviewed_at),
}
_TEXT_KEYS = tuple(_TEXT_COLUMNS)
#: The list columns: record attributes of that name.
_LIST_KEYS = ("tags", "reason_types")
#: What `shown` reads: the id, then every field a result summary shows.
_SHOWN_FIELDS = ("id", *SUMMARY_FIELDS)
#: Bytes of one entry of the id -> row dict besides the id's characters and the dict's
#: table (sys.getsizeof): the key's str header (49) and the row's int (28 past 256).
_ROW_ENTRY_BYTES = 49 + 28


@dataclass(frozen=True, slots=True)
class IndexedRecord:
    """One record to index: id, the record, embedding (dim floats), embedded text, and
    when the store last wrote it (epoch ms; None when not stored yet or not stamped)."""

    id: str
    decision: DecisionRecord
    embedding: Sequence[float] | npt.NDArray[np.floating]
    document: str
    updated_at: int | None = None


class Match(NamedTuple):
    """One search result: record id, its row, cosine distance in [0, 2], BM25 score or None.

    `distance` is rounded to 6 places (`a2a.index.topk.DECIMALS`); `score` too. A named
    tuple, not a dataclass: a hybrid query builds ~200 (a frozen dataclass's __init__
    costs ~0.8 us each, a tuple's ~0.2 us).
    """

    id: str
    row: int
    distance: float
    score: float | None = None


class SearchIndex:
    """The store's records in memory: filter columns, vectors, BM25 postings, tags, metadata.

    A cache of Chroma (the system of record), rebuilt from it at start (a2a.index.sync).
    Rows are numbered in insertion order; `upsert` of a known id tombstones its old row and
    appends a new one; tombstones are compacted away once they pass COMPACT_FRACTION, which
    renumbers rows (hold rows only under `reading()`, ids otherwise).

    Thread-safe: any number of concurrent readers and one writer (ReadWriteLock). Writes
    take the write lock themselves; reads (every other method) must run inside
    `with index.reading():`, held across a mask and the searches and metadata reads that
    use it, so no compaction renumbers rows in between.

    Public API (used by the query, similarity, list and calibration services):
    - `upsert(records)`, `remove(ids)`, `clear()`: writes.
    - `mask(filters) -> bool[len]`: rows passing QueryFilters (as `a2a.store.metadata.to_where`).
    - `semantic(vector, mask, k)`, `keyword(query, mask, k)`, `distances(vector, rows)`,
      `within(vector, mask, max_distance)`.
    - `similar(tags, category, stakes, mask)`: findSimilarDecisions' candidates.
    - `shown(rows)`, `reason_types(rows)`: what a query result shows of each row.
    - `row_of(id)`, `id_of(row)`, `ids`, `summaries(rows)` (DecisionMetadata),
      `content_hash(id)`, `updated_at(id)`, `columns` (FilterColumns: numpy columns for
      listDecisions and getCalibration), `alive_count`, `len()`, `memory_bytes()`.
    """

    def __init__(
        self,
        vector_dtype: VectorDtype = "float32",
        exact_vectors: Callable[[list[str]], npt.NDArray[np.float32]] | None = None,
        *,
        graph_min_rows: int | None = GRAPH_MIN_ROWS,
        graph_min_fraction: float = GRAPH_MIN_FRACTION,
        graph_inline: bool = True,
        field_weights: FieldWeights | None = None,
    ) -> None:
        """`vector_dtype` float16 halves the vectors' memory; its candidates are then
        re-scored exactly with `exact_vectors(ids)` (float32 rows in the order of `ids`,
        e.g. read from Chroma), or, without it, with the widened float16 vectors.

        The planner's knobs: the graph is built once `graph_min_rows` records are indexed
        (None: never; 0 with `graph_min_fraction` 0.0 forces the approximate path on every
        semantic search not asked to be exact, as the recall test does) and walked when at
        least `graph_min_fraction` of the rows pass the filter. `graph_inline` False leaves
        the first build to `build_graph` (a LiveIndex runs it in a worker thread after its
        load: minutes at 1M, during which searches scan exactly)."""
        self.lock = ReadWriteLock()
        # Keyword search counts the title (and tags) more than once (a2a.index.fields).
        self._field_weights = field_weights or FieldWeights()
        self._vector_dtype: VectorDtype = vector_dtype
        self._exact_vectors = exact_vectors
        self._graph_min_rows = graph_min_rows
        self._graph_min_fraction = graph_min_fraction
        self._graph_inline = graph_inline
        self._masks = MaskCache()
        self._reset()

    def _reset(self) -> None:
        # Changes on every write, so caches of derived statistics know they are stale.
        self._generation = getattr(self, "_generation", 0) + 1
        # Changes whenever rows are renumbered (compaction) or dropped (clear): a graph
        # built outside the lock meanwhile (build_graph) is then of other rows.
        self._compactions = getattr(self, "_compactions", 0) + 1
        # Ids as one UTF-8 column (row -> id) and a dict (id -> current row): the dict is
        # the only Python object per record left (a2a.index.stored_fields).
        self._ids = IdColumn()
        self._row: dict[str, int] = {}
        self.columns = FilterColumns()
        self._vectors = VectorMatrix(dtype=self._vector_dtype)
        self._graph: GraphIndex | None = None
        # A build stopped part way (build_graph's `stop`): its nodes are the first vector
        # rows; a snapshot keeps it and the next build goes on from it.
        self._partial: GraphIndex | None = None
        self._bm25 = BM25Index()
        self._tags = TagIndex()
        # Stored fields as columns, read for the rows a result shows (~30 us for ten
        # rows): a tuple per row cost ~400 bytes and 5 objects a row (docs/scaling.md).
        self._text = {key: StringColumn() for key in _TEXT_KEYS}
        self._lists = {key: ListColumn() for key in _LIST_KEYS}
        self._updated_at = IntColumn()

    def reading(self) -> AbstractContextManager[None]:
        """Context manager holding the read lock (reentrant use is not supported)."""
        return self.lock.reading()

    # -- size and lookups ------------------------------------------------------------------

    def __len__(self) -> int:
        """Rows, tombstones included (the length of every mask)."""
        return len(self._ids)

    @property
    def vector_dtype(self) -> VectorDtype:
        """How the vectors are held: float32, or float16 (re-scored exactly)."""
        return self._vector_dtype

    @property
    def dimension(self) -> int | None:
        """Vector dimension, None before the first record."""
        return self._vectors.dim

    @property
    def vectors(self) -> VectorMatrix:
        """The vector matrix (read-only; rows below its length never change until a
        compaction, which changes `compactions`)."""
        return self._vectors

    @property
    def compactions(self) -> int:
        """Changes whenever rows are renumbered (a compaction) or dropped (`clear`): what a
        structure numbered by these rows (a2a.index.union_graph) checks it still fits."""
        return self._compactions

    @property
    def alive_count(self) -> int:
        """Records currently indexed."""
        return self.columns.alive_count

    @property
    def ids(self) -> IdColumn:
        """Record id per row (tombstoned rows keep theirs): `ids[row]` is a str. Read-only;
        appended to in place, replaced whole by a compaction, so a reader holding it keeps
        answering for the rows it had."""
        return self._ids

    def memory_bytes(self) -> int:
        """An estimate of the bytes the index holds: every array's buffer (vectors mapped
        from a snapshot included, spare capacity included), the graph, and the id -> row
        dict (the one Python object per record left). Cached masks are left out (at most
        MaskCache's few, one byte per row each). O(terms + tags), no pass over the rows."""
        ids = len(self._row) * _ROW_ENTRY_BYTES + self._ids.text_bytes + sys.getsizeof(self._row)
        ids += self._ids.nbytes
        stored = sum(column.nbytes for column in self._text.values())
        stored += sum(column.nbytes for column in self._lists.values())
        stored += self._updated_at.nbytes
        graph = sum(g.nbytes for g in (self._graph, self._partial) if g is not None)
        vectors = self._vectors.nbytes + self.columns.nbytes + self._bm25.nbytes
        return ids + stored + graph + vectors + self._tags.nbytes

    def row_of(self, record_id: str) -> int | None:
        """The current row of `record_id`, None when it is not indexed."""
        return self._row.get(record_id)

    def id_of(self, row: int) -> str:
        """The record id at `row`."""
        return self._ids[row]

    def content_hash(self, record_id: str) -> str | None:
        """The indexed `content_hash` of `record_id`, None when absent or not indexed."""
        row = self._row.get(record_id)
        return None if row is None else self._text["content_hash"][row]

    def updated_at(self, record_id: str) -> int | None:
        """The indexed `updated_at` (epoch ms) of `record_id`, None when absent/not indexed."""
        row = self._row.get(record_id)
        return None if row is None else self._updated_at[row]

    def summaries(self, rows: Sequence[int]) -> list[DecisionMetadata]:
        """The summary of the record at each of `rows`, in order, from the columns (`shown`).

        Each column is read once for all `rows`: call it for the rows a result shows.
        """
        shown = self.shown(rows)
        return [DecisionMetadata(**dict(zip(_SHOWN_FIELDS, row, strict=True))) for row in shown]

    def shown(self, rows: Sequence[int]) -> list[tuple[Any, ...]]:
        """What a result shows of the record at each of `rows`: `(id, *SUMMARY_FIELDS
        values)` (confidence a float, absent fields None), read from the columns."""
        if len(rows) == 0:
            return []
        return list(zip(*self.fields(rows, _SHOWN_FIELDS), strict=True))

    def reason_types(self, rows: Sequence[int]) -> list[list[str]]:
        """The reason types of the record at each of `rows` (new lists, [] when none)."""
        return [list(types) for types in self._lists["reason_types"].values(rows)]

    def fields(self, rows: Sequence[int], names: Sequence[str]) -> list[list[Any]]:
        """Column `name` of each of `rows`, for each of `names` (the id, SUMMARY_FIELDS,
        `date_epoch`, `tags`, `reason_types`, `content_hash`, `recorded_at`, `reviewed_at`,
        `updated_at`): one list per name, read from its column once."""
        at = np.asarray(rows, dtype=np.int64)
        found: list[list[Any]] = []
        for name in names:
            if name == "id":
                found.append(self._ids.ids(at))
            elif name in FilterColumns.CODED:
                found.append(self.columns.values(name, at))
            elif name == "confidence":  # NaN: absent
                found.append([None if c != c else c for c in self.columns.confidence[at].tolist()])
            elif name == "date_epoch":
                epochs = self.columns.date_epoch[at].tolist()
                found.append([None if e != e else int(e) for e in epochs])
            elif name in self._text:
                found.append(self._text[name].values(at))
            elif name in self._lists:
                found.append(self._lists[name].values(at))
            elif name == "updated_at":
                found.append(self._updated_at.values(at))
            else:
                raise ValueError(f"the index keeps no field {name!r}")
        return found

    # -- snapshots (a2a.index.snapshot) ----------------------------------------------------

    def persist(self, folder: Path) -> list[Path]:
        """Write the index's state into `folder` (call under `reading()`); returns the files:
        one .npy per array (vectors.npy, the filter, stored-field, BM25 and tag columns),
        state.json (vocabularies, terms, tags, sizes) and the graph's files when there is
        a graph (or `graph-partial` files for a build stopped part way). Every .npy loads
        memory-mapped (`restore`)."""
        vectors = folder / "vectors.npy"
        files = VectorMatrix.files(vectors)
        state: dict[str, Any] = {"vectors": self._vectors.save(vectors)}
        state["vector_dtype"] = self._vector_dtype
        state["rows"] = len(self._ids)
        files += self._ids.save(folder, "ids")
        for key, text in self._text.items():
            files += text.save(folder, f"text.{key}")
        for key, listed in self._lists.items():
            files += listed.save(folder, f"list.{key}")
        state["lists"] = {key: listed.vocabulary() for key, listed in self._lists.items()}
        files += self._updated_at.save(folder, "updated_at")
        saved, state["vocabularies"] = self.columns.save(folder)
        files += saved
        saved, state["terms"] = self._bm25.save(folder)
        state["bm25"] = {"k1": self._bm25.k1, "b": self._bm25.b}
        files += saved
        saved, state["tags"] = self._tags.save(folder)
        files += saved
        written = folder / "state.json"
        written.write_text(json.dumps(state))
        graph = [] if self._graph is None else self._graph.save(folder)
        if self._graph is None and self._partial is not None:
            graph = self._partial.save(folder, PARTIAL_GRAPH)
        return [*files, written, *graph]

    @classmethod
    def restore(cls, folder: Path, **options: Any) -> SearchIndex:
        """The index `persist` wrote into `folder`, its arrays memory-mapped copy-on-write
        (pages read when first touched; a write after the load copies what it changes);
        `options` are the constructor's. The graph is built afresh (from the snapshot's
        partial graph, when a build was stopped part way) when the snapshot has none, the
        index is past `graph_min_rows` and `graph_inline` (else: `build_graph`).
        Raises ValueError, KeyError or OSError when a file is missing or does not fit."""
        state = json.loads((folder / "state.json").read_text())
        index = cls(state["vector_dtype"], **options)
        rows: int = state["rows"]
        index._vectors = VectorMatrix.load(folder / "vectors.npy", state["vectors"])
        index._ids = IdColumn.load(folder, "ids", rows)
        index._text = {key: StringColumn.load(folder, f"text.{key}", rows) for key in _TEXT_KEYS}
        index._lists = {
            key: ListColumn.load(folder, f"list.{key}", state["lists"][key], rows)
            for key in _LIST_KEYS
        }
        index._updated_at = IntColumn.load(folder, "updated_at", rows)
        index.columns = FilterColumns.load(folder, state["vocabularies"], rows)
        bm25 = state["bm25"]
        index._bm25 = BM25Index.load(folder, state["terms"], rows, bm25["k1"], bm25["b"])
        index._tags = TagIndex.load(folder, state["tags"], rows)
        lengths = [len(text) for text in index._text.values()]
        lengths += [len(listed) for listed in index._lists.values()]
        lengths += [len(index._updated_at), len(index.columns), len(index._bm25), len(index._tags)]
        if set(lengths) != {rows} or len(index._vectors) != rows:
            raise ValueError(f"columns of unequal lengths in {folder}: {rows} ids, {lengths}")
        alive: list[bool] = index.columns.alive.tolist()
        index._row = {
            record_id: row
            for row, (record_id, live) in enumerate(zip(index._ids, alive, strict=True))
            if live
        }
        if (folder / "graph.faiss").exists():
            index._graph = GraphIndex.load(folder)
        elif (folder / f"{PARTIAL_GRAPH}.faiss").exists():
            index._partial = GraphIndex.load(folder, PARTIAL_GRAPH)
        if index._graph is None and index._graph_inline:
            index.build_graph()
        index.warm()
        return index

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, records: Sequence[IndexedRecord]) -> None:
        """Index `records`; a known id's old row is tombstoned and the record appended.

        A repeated id within `records` keeps the last. Raises ValueError when an embedding's
        dimension differs from the index's.
        """
        latest = {record.id: record for record in records}
        if not latest:
            return
        batch = list(latest.values())
        terms = [
            weighted_terms(r.document, r.decision.title, r.decision.tags, self._field_weights)
            for r in batch
        ]
        vectors = np.asarray([np.asarray(r.embedding, dtype=np.float32) for r in batch])
        with self.lock.writing():
            self._generation += 1
            self._kill([self._row[i] for i in latest if i in self._row])
            first = self.columns.append([record.decision for record in batch])
            rows = np.arange(first, first + len(batch), dtype=np.int64)
            self._vectors.append(vectors, rows)
            self._grow_graph(vectors, rows)
            self._bm25.add(terms)
            self._tags.add([normalize_tags(record.decision.tags) for record in batch])
            self._ids.append([record.id for record in batch])
            self._row.update(zip((record.id for record in batch), rows.tolist(), strict=True))
            self._store_fields(batch)
            self._maybe_compact()

    def _grow_graph(self, vectors: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]) -> None:
        """Add the new rows to the graph; build it from every row once the index reaches
        `graph_min_rows` (only the rows' vectors: tombstoned ones never pass a mask)."""
        if self._graph is not None:
            self._graph.add(vectors, rows)
        elif self._graph_inline and self.wants_graph(len(self._ids) + len(rows)):
            self._graph, self._partial = GraphIndex.build(self._vectors), None

    def wants_graph(self, rows: int | None = None) -> bool:
        """Whether the index (of `rows` rows, default its own) should have a graph and has
        none yet."""
        size = len(self._ids) if rows is None else rows
        return (
            self._graph is None
            and self._graph_min_rows is not None
            and size >= min(self._graph_min_rows, ORG_GRAPH_MIN_ROWS)
        )

    def build_graph(self, stop: Callable[[], bool] | None = None) -> bool:
        """Build the graph if `wants_graph()`: from the rows present now, outside the write
        lock (rows below the current count never change until a compaction), then, under
        it, the rows appended meanwhile. Started again when a compaction renumbered the
        rows meanwhile. Call from one thread at a time.

        Goes on from the partial graph of a build stopped before (`partial_graph`, kept in
        memory or restored from a snapshot). `stop()` is asked every BUILD_STEP_ROWS rows;
        once true, the nodes added so far are kept as the partial graph (a snapshot holds
        it) and the build returns. True when the index has its graph (or wants none).
        """
        while self.wants_graph():
            with self.lock.writing():  # the partial graph is this build's alone from here
                vectors, compactions = self._vectors, self._compactions
                built = len(vectors)
                graph, self._partial = self._partial, None
            if graph is None or len(graph) > built:
                graph = GraphIndex(vectors.dim or 0)
            for start in range(len(graph), built, BUILD_STEP_ROWS):
                if stop is not None and stop():
                    with self.lock.writing():
                        if self._compactions == compactions and self._graph is None:
                            self._partial = graph
                    return False
                graph.add_rows(vectors, start, min(start + BUILD_STEP_ROWS, built))
            with self.lock.writing():
                if self._compactions != compactions or self._graph is not None:
                    continue
                rest = np.arange(built, len(self._vectors), dtype=np.int64)
                if len(rest):
                    matrix = np.asarray(self._vectors.matrix[rest], np.float32)
                    graph.add(matrix, self._vectors.owner[rest])
                self._graph = graph
        return not self.wants_graph()

    @property
    def partial_graph(self) -> GraphIndex | None:
        """The graph of a build stopped part way (its nodes: the first vector rows), which
        the next `build_graph` goes on from; None when there is none. Never searched."""
        return self._partial

    @property
    def graph(self) -> GraphIndex | None:
        """The HNSW graph over the rows, None below `graph_min_rows` (a2a.index.graph)."""
        return self._graph

    def remove(self, ids: Sequence[str]) -> int:
        """Drop `ids` from the index (unknown ids are ignored); returns how many were indexed."""
        with self.lock.writing():
            self._generation += 1
            rows = [self._row[i] for i in set(ids) if i in self._row]
            self._kill(rows)
            self._maybe_compact()
        return len(rows)

    def clear(self) -> None:
        """Drop every record."""
        with self.lock.writing():
            self._reset()

    def _kill(self, rows: Sequence[int]) -> None:
        for record_id in self._ids.ids(rows):
            del self._row[record_id]
        if rows:
            self.columns.kill(rows)

    def _store_fields(self, batch: Sequence[IndexedRecord]) -> None:
        for key, read in _TEXT_COLUMNS.items():
            self._text[key].append([read(record.decision) for record in batch])
        for key in _LIST_KEYS:
            self._lists[key].append([getattr(record.decision, key) for record in batch])
        self._updated_at.append([record.updated_at for record in batch])

    def _maybe_compact(self) -> None:
        dead = len(self._ids) - self.columns.alive_count
        if dead < MIN_COMPACT or dead < COMPACT_FRACTION * len(self._ids):
            return
        keep = np.flatnonzero(self.columns.alive).astype(np.int64)
        fresh = np.arange(len(keep), dtype=np.int64)
        renumber = np.full(len(self._ids), -1, dtype=np.int64)
        renumber[keep] = fresh
        vector_rows = np.flatnonzero(renumber[self._vectors.owner] >= 0).astype(np.int64)
        self._vectors = self._vectors.take(vector_rows, renumber[self._vectors.owner[vector_rows]])
        self._compactions += 1
        self._partial = None  # numbered by the old rows: the next build starts afresh
        if self._graph is not None:
            self._graph.renumber(renumber)
        self.columns = self.columns.take(keep)
        self._bm25 = self._bm25.take(keep)
        self._ids = self._ids.take(keep)
        self._row = {record_id: row for row, record_id in enumerate(self._ids)}
        for key in _TEXT_KEYS:
            self._text[key] = self._text[key].take(keep)
        for key in _LIST_KEYS:
            self._lists[key] = self._lists[key].take(keep)
        self._updated_at = self._updated_at.take(keep)
        self._tags = TagIndex.of(normalize_tags(tags) for tags in self._lists["tags"].values(fresh))

    # -- reads (call under `reading()`, or let each method take the lock) --------------------

    def mask(self, filters: QueryFilters | None) -> BoolArray:
        """True for each current row passing `filters` (see FilterColumns.mask).

        Read-only: the mask is shared with every reader of the same filters until the
        next write (a2a.index.mask_cache); copy it before changing it.
        """
        return self.selection(filters)[0]

    def selection(self, filters: QueryFilters | None) -> Selection:
        """`(mask(filters), its passing rows ascending or None)`: the rows are kept when
        few pass (a2a.index.mask_cache.ROWS_KEPT_BELOW). Both read-only and shared."""
        return self._masks.get(self._generation, filters, lambda: self.columns.mask(filters))

    def semantic(
        self,
        vector: Sequence[float] | npt.NDArray[np.floating],
        mask: BoolArray,
        k: int,
        passing: npt.NDArray[np.int64] | None = None,
        exact: bool = False,
        org: bool = False,
        proposed: npt.NDArray[np.int64] | None = None,
    ) -> list[Match]:
        """The `k` rows passing `mask` closest to `vector` (L2-normalised, dim floats).

        Ordered by cosine distance (1 - inner product, clamped to [0, 2], rounded to 6
        places), then id. `passing`, when given, is `mask`'s true rows ascending (from
        `selection`). With `exact` every passing row is scored (CONTRACT, Exact or
        approximate); without it the planner may take the graph's candidates instead
        (`plan`; `org`: for org-level search), each scored exactly as a scan would.
        `proposed`: rows passing `mask` that an org-level walk of a union graph proposed
        (a2a.index.union_graph), scored in place of the planner's choice.
        """
        query = np.asarray(vector, dtype=np.float32)
        if proposed is not None and not exact:
            return self._scored(query, proposed, k)
        count = None if exact else self.plan(mask, passing, org)
        if count is not None:
            assert self._graph is not None
            wanted = graph_candidates(k)
            # No filter, no tombstone, no node of a compacted row: no selector needed.
            every = count == len(self._ids) and self._graph.identity
            breadth = self._breadth(count)
            rows = self._graph.search(query, None if every else mask, wanted, breadth)
            if len(rows) >= min(k, count):
                return self._scored(query, rows, k)
            # The walk found fewer rows than pass: scan (never fewer results than exact).
        if passing is not None and len(passing) <= EXACT_AT_MOST and self._exact_in_memory():
            # Few rows: score them all exactly at once (no float32 scan, no near-best cut).
            rows = passing
        else:
            rows, dots = self._vectors.scores(query, mask, passing)
            if len(rows) > k:
                rows = _near_best(rows, dots, k, self._scan_error())
        return self._scored(query, rows, k)

    def _scored(
        self, query: npt.NDArray[np.float32], rows: npt.NDArray[np.int64], k: int
    ) -> list[Match]:
        """The `k` of `rows` closest to `query` by exact distance, then id."""
        distances = _cosine_distances(self._exact_dots(query, rows))
        chosen = top_k(distances, rows, k, self._ids, descending=False)
        return [Match(self._ids[row], row, distance) for row, distance in chosen]

    def plan(
        self, mask: BoolArray, passing: npt.NDArray[np.int64] | None = None, org: bool = False
    ) -> int | None:
        """How many rows pass `mask` when a semantic search of it walks the graph, None
        when it scans exactly (no graph, too few rows or too few passing). `org`: for
        org-level search, which walks from ORG_GRAPH_MIN_ROWS rows."""
        if self._graph is None or self._graph_min_rows is None:
            return None
        least = min(self._graph_min_rows, ORG_GRAPH_MIN_ROWS) if org else self._graph_min_rows
        if self.columns.alive_count < least:
            return None
        count = len(passing) if passing is not None else int(np.count_nonzero(mask))
        if count == 0 or count < self._graph_min_fraction * self.columns.alive_count:
            return None
        return count

    def _breadth(self, passing: int) -> int:
        """The graph walk's efSearch when `passing` rows pass (walk_breadth over the graph's
        nodes: the nodes of removed rows are walked too, and never pass)."""
        nodes = len(self._graph) if self._graph is not None else self.columns.alive_count
        return walk_breadth(max(nodes, passing), passing)

    def _exact_in_memory(self) -> bool:
        """Whether the exact vectors are the index's own, not read from Chroma: float32, or
        float16 with no `exact_vectors` given (then widened)."""
        return self._exact_vectors is None or self._vectors.dtype == np.float32

    def _scan_error(self) -> float:
        """How far a scan's inner product may be from the exact one: float16 vectors err by
        ~1e-3; float32 sums by ~1e-6 at most (the order BLAS adds in varies with the rows'
        alignment, gathered or not), kept with a wide margin."""
        return 4e-3 if self._vectors.dtype != np.float32 else 1e-4

    def _exact_dots(
        self, query: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float64]:
        """Inner products of `query` with the vectors of `rows`, summed in float64 from the
        float32 vectors (Chroma's own via `exact_vectors` when the index holds float16):
        the one value every mode shows for a row, however a scan summed it."""
        if len(rows) == 0:
            return np.zeros(0, dtype=np.float64)
        if self._exact_in_memory():
            vectors = self._vectors.vectors(rows)
        else:
            assert self._exact_vectors is not None
            vectors = self._exact_vectors([self._ids[r] for r in rows.tolist()])
        dots: npt.NDArray[np.float64] = np.asarray(vectors, np.float64) @ query.astype(np.float64)
        return dots

    def semantic_work(self, passing: int, approximate: bool = False) -> int:
        """Multiply-adds of `semantic` (or `within`) when `passing` rows pass the mask;
        `approximate`: of a walk of the graph (breadth x neighbours vectors, ~2/3 of
        them scored) and the candidates' exact scoring."""
        if approximate and self._graph is not None:
            return walk_work(self._breadth(passing), self.dimension or 0)
        return self._vectors.work(passing)

    def warm(self) -> None:
        """Compute BM25's statistics for the current rows now, rather than at the next
        keyword or hybrid query (which then also qualifies for the event loop at once:
        a2a.query.service). A pass over every row; takes the read lock."""
        with self.reading():
            self._bm25.prepare(self.columns.alive, self._generation)

    def keyword_work(self, query: str) -> int | None:
        """Entries `keyword(query, ...)` touches at most; None when the BM25 statistics are
        not computed since the last write (then it first makes a pass over every row, and
        over all postings of each term)."""
        return self._bm25.work(analyze_query(query), self._generation)

    def keyword(
        self,
        query: str,
        mask: BoolArray,
        k: int,
        passing: npt.NDArray[np.int64] | None = None,
    ) -> list[Match]:
        """The `k` rows passing `mask` with the highest BM25 score for `query` (> 0).

        Ordered by score (rounded to 6 places) descending, then id. `distance` is NaN:
        callers fill it with `distances`. [] when the query has no terms. `passing`, when
        given, is `mask`'s true rows ascending (from `selection`).
        """
        alive = self.columns.alive
        terms = analyze_query(query)
        rows, scores = self._bm25.best(terms, mask, alive, k, self._generation, passing)
        chosen = top_k(scores, rows, k, self._ids, descending=True)
        return [Match(self._ids[row], row, float("nan"), score) for row, score in chosen]

    def distances(
        self, vector: Sequence[float] | npt.NDArray[np.floating], rows: Sequence[int]
    ) -> list[float]:
        """Cosine distance in [0, 2] (rounded to 6 places) of `vector` to each of `rows`:
        the value `semantic` gives the same row (float64 sums, the same rounding)."""
        if not rows:
            return []
        dots = self._exact_dots(np.asarray(vector, np.float32), np.asarray(rows, np.int64))
        rounded: list[float] = np.round(_cosine_distances(dots), DECIMALS).tolist()
        return rounded

    def within(
        self,
        vector: Sequence[float] | npt.NDArray[np.floating],
        mask: BoolArray,
        max_distance: float,
    ) -> BoolArray:
        """`mask` narrowed to rows whose cosine distance to `vector` (rounded to 6 places,
        as shown) is at most `max_distance`: maxDistance for keyword and hybrid modes.
        Rows the scan puts near the bound are decided on their exact distance."""
        query = np.asarray(vector, dtype=np.float32)
        rows, dots = self._vectors.scores(query, mask)
        approximate = _cosine_distances(dots)
        error = self._scan_error()
        near = np.abs(approximate - max_distance) <= error
        exact = np.round(_cosine_distances(self._exact_dots(query, rows[near])), DECIMALS)
        narrowed = np.zeros(len(mask), dtype=bool)
        narrowed[rows[approximate < max_distance - error]] = True
        narrowed[rows[near][exact <= max_distance]] = True
        return narrowed

    def similar(
        self,
        tags: frozenset[str],
        category: str | None,
        stakes: str | None,
        mask: BoolArray,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], BoolArray, BoolArray]:
        """Rows passing `mask` sharing anything with the probe: findSimilarDecisions' input.

        Returns (rows ascending, tag Jaccard, category equal, stakes equal) per row; rows
        sharing nothing (every component 0) are left out. `tags` are normalised already.
        """
        tag_rows, jaccard = self._tags.jaccard(tags, mask)
        parts = [tag_rows]
        same_category = self._equal("category", category, mask)
        same_stakes = self._equal("stakes", stakes, mask)
        parts += [np.flatnonzero(same_category), np.flatnonzero(same_stakes)]
        rows = np.unique(np.concatenate(parts)).astype(np.int64)
        scores = np.zeros(len(rows), dtype=np.float64)
        scores[np.searchsorted(rows, tag_rows)] = jaccard
        return rows, scores, same_category[rows], same_stakes[rows]

    def values_of(self, column: str) -> list[str]:
        """The distinct values of coded column `column` (FilterColumns.CODED) on current
        rows, sorted; absent values left out. One pass over the column."""
        codes = np.unique(self.columns.codes(column)[self.columns.alive]).tolist()
        values = self.columns.vocabularies[column].values(codes)
        return sorted(v for v in values if v is not None)

    def _equal(self, column: str, value: str | None, mask: BoolArray) -> BoolArray:
        if value is None:
            return np.zeros(len(mask), dtype=bool)
        code = self.columns.vocabularies[column].find(value)
        if code < 0:
            return np.zeros(len(mask), dtype=bool)
        equal: BoolArray = (self.columns.codes(column) == code) & mask
        return equal


def graph_candidates(k: int) -> int:
    """Candidates a graph walk proposes for `k` results (all scored again exactly)."""
    return max(GRAPH_CANDIDATES_PER_RESULT * k, GRAPH_MIN_CANDIDATES)


def walk_work(breadth: int, dimension: int) -> int:
    """Multiply-adds of a graph walk `breadth` wide (breadth x neighbours vectors, ~2/3 of
    them scored) and of its candidates' exact scoring, in `dimension`s."""
    return (breadth * NEIGHBOURS * 2 // 3 + 2 * GRAPH_MIN_CANDIDATES) * dimension


def walk_breadth(rows: int, passing: int) -> int:
    """The graph walk's efSearch (HNSW's breadth) in a graph of `rows` nodes when `passing`
    of them pass the filter, from the measured table (a2a.index.breadth_table):
    the entry of the smallest measured size at or above `rows` and the largest measured
    share at or below the share passing, so never narrower than a measured need. Past the
    largest measured size, that size's entry grown as 1 + GRAPH_BREADTH_GROWTH x log10(rows
    / 100,000) grows; below the smallest measured share, divided by sqrt(share / that
    share). At most GRAPH_MAX_BREADTH."""
    table = breadth_table.BREADTHS
    rows = max(1, rows)
    share = max(passing / rows, 1e-9)
    sizes = sorted(table)
    size = next((s for s in sizes if s >= rows), sizes[-1])
    by_share = table[size]
    fitting = [s for s in by_share if s <= share]
    least = min(by_share)
    breadth = float(
        by_share[max(fitting)] if fitting else by_share[least] / math.sqrt(share / least)
    )
    if rows > size:
        breadth *= _growth(rows) / _growth(size)
    return min(GRAPH_MAX_BREADTH, math.ceil(breadth))


def _growth(rows: int) -> float:
    """How a walk's breadth grows with rows past 100,000 (1 at or below it)."""
    return 1 + GRAPH_BREADTH_GROWTH * math.log10(max(rows, 100_000) / 100_000)


def _near_best(
    rows: npt.NDArray[np.int64], dots: npt.NDArray[np.floating], k: int, error: float
) -> npt.NDArray[np.int64]:
    """The rows whose scanned inner product is within `error` (plus 4 * REACH) of the k-th
    largest, or above it: a superset of the k best by exact product, rounding ties included,
    so only these are scored again exactly. Products past 1 (or -1) all clamp to distance
    0 (or 2) and tie with the k-th however far below it they are, so the cut is never above
    1 and there is none at -1.
    """
    kth = np.partition(dots, len(dots) - k)[len(dots) - k]
    if kth <= -1.0:
        return rows
    near: npt.NDArray[np.int64] = rows[dots >= min(float(kth), 1.0) - error - 4 * REACH]
    return near


def _cosine_distances(dots: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
    """1 - inner product in float64, clamped to [0, 2] (ufuncs in place: np.clip's Python
    wrapper costs more than the arithmetic on a few hundred rows)."""
    distances: npt.NDArray[np.float64] = np.subtract(1.0, dots, dtype=np.float64)
    np.maximum(distances, 0.0, out=distances)
    np.minimum(distances, 2.0, out=distances)
    return distances
