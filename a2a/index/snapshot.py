"""Snapshots of a search index on disk: a replica maps one at start instead of reading Chroma.

Layout under a collection's snapshot folder (`root`, e.g. `<CSTP_DATA_DIR>/index/<name>`):
- `snap-<ns>-<pid>/`: one complete snapshot: `vectors.npy` (the vector matrix, with spare
  rows for appends), one `.npy` per column of ids, stored fields, filter columns, BM25
  postings and tag postings (a2a.index.stored_fields; every `.npy` is memory-mapped
  copy-on-write at load, so a load reads pages only as they are used and a write after it
  touches only what it changes), `state.json` (vocabularies, BM25 terms, tags, sizes),
  `graph.faiss` and `graph_rows.npy` (the HNSW graph, when the index has one), and
  `manifest.json` (format, SnapshotStamp, the SHA-256 of every other file);
- `CURRENT`: the name of the snapshot to load.
A write fills `.tmp-<pid>-<ns>/`, fsyncs every file and the folder, renames it to
`snap-...`, then replaces CURRENT (temp file, fsync, rename, fsync of `root`): a process
killed at any point leaves CURRENT naming the previous complete snapshot, or nothing.
Readers never write, so replicas may share a folder they can only read.

A snapshot is refused (`SnapshotRefused`, with the reason: the caller logs it and rebuilds
from Chroma) when its format, model or dimension differ from the caller's, or a file's
checksum does not match. Its stamp (Chroma's revision and the watermark of its last
freshness check) is where the catch-up through a2a.index.sync starts. Nothing is unpickled
(`.npy` files load with allow_pickle=False); faiss reads the graph file.

Formats: 1 pickled the Python side whole (state.pickle: a tuple and strings per row); 2
(this one) keeps every per-row field in `.npy` columns. A snapshot of format 1 is refused.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from a2a.errors import SnapshotRefused
from a2a.index.search_index import SearchIndex

log = logging.getLogger(__name__)

FORMAT = 2
CURRENT = "CURRENT"
MANIFEST = "manifest.json"
#: Temporary folders of writes older than this are taken as abandoned (a killed writer).
ABANDONED_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class SnapshotStamp:
    """What a snapshot holds: Chroma's `revision` marker (None: no collection yet) and the
    `watermark_ms` (epoch ms) of the index's last freshness check when it was written, and
    the embedding `model` and `dimension` its vectors come from."""

    revision: str | None
    watermark_ms: int
    model: str
    dimension: int


def write_snapshot(index: SearchIndex, stamp: SnapshotStamp, root: Path) -> Path:
    """Write `index` (under its read lock) as the current snapshot in `root`; returns its
    folder. Older snapshots and abandoned temporary folders in `root` are removed.

    Raises OSError when `root` cannot be written (e.g. a replica's read-only share).
    """
    root.mkdir(parents=True, exist_ok=True)
    stamp_ns = time.time_ns()
    temporary = root / f".tmp-{os.getpid()}-{stamp_ns}"
    temporary.mkdir()
    try:
        with index.reading():
            files = index.persist(temporary)
            rows = index.alive_count
        manifest = {
            "format": FORMAT,
            "stamp": asdict(stamp),
            "rows": rows,
            "files": {f.name: _sha256(f) for f in files},
        }
        (temporary / MANIFEST).write_text(json.dumps(manifest, indent=1))
        for path in [*files, temporary / MANIFEST]:
            _fsync(path)
        _fsync(temporary)
        final = root / f"snap-{stamp_ns}-{os.getpid()}"
        temporary.rename(final)
        _fsync(root)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    pointer = root / f".{CURRENT}.{os.getpid()}"
    pointer.write_text(final.name)
    _fsync(pointer)
    pointer.replace(root / CURRENT)
    _fsync(root)
    _remove_old(root, keep=final.name)
    return final


def snapshot_count(root: Path) -> tuple[str | None, int] | None:
    """(stamp revision, records held) of the current snapshot in `root`, read from its
    manifest alone (no checksum: a count, not the data). None when there is none, it
    cannot be read, or its manifest predates the count."""
    try:
        name = (root / CURRENT).read_text().strip()
        manifest = json.loads((root / name / MANIFEST).read_text())
        return manifest["stamp"]["revision"], int(manifest["rows"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def load_index(
    root: Path,
    *,
    model: str,
    dimension: int | None,
    **index_options: Any,
) -> tuple[SearchIndex, SnapshotStamp] | None:
    """The index of the current snapshot in `root` and its stamp; None when there is none.

    `dimension` None accepts any. `index_options` are SearchIndex's constructor options
    (its planner knobs, `exact_vectors`). One collection's index, loaded on its own: what
    a replica does at start, and what a per-tenant cache would do to load one tenant.
    Raises SnapshotRefused (the reason in its message) when the snapshot is corrupt, of
    another format, model or dimension; the caller then rebuilds from Chroma.
    """
    pointer = root / CURRENT
    try:
        name = pointer.read_text().strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SnapshotRefused(f"{pointer} cannot be read: {exc}") from exc
    folder = root / name
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        stamp = SnapshotStamp(**manifest["stamp"])
        files: dict[str, str] = manifest["files"]
        version = manifest["format"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SnapshotRefused(f"{folder} has no readable manifest: {exc}") from exc
    if version != FORMAT:
        raise SnapshotRefused(f"{folder} is of format {version}, this version reads {FORMAT}")
    if stamp.model != model:
        raise SnapshotRefused(f"{folder} holds vectors of model {stamp.model!r}, not {model!r}")
    if dimension is not None and stamp.dimension != dimension:
        raise SnapshotRefused(
            f"{folder} holds {stamp.dimension}-dimensional vectors, the model gives {dimension}"
        )
    for file_name, digest in files.items():
        try:
            actual = _sha256(folder / file_name)
        except OSError as exc:
            raise SnapshotRefused(f"{folder / file_name} cannot be read: {exc}") from exc
        if actual != digest:
            raise SnapshotRefused(f"{folder / file_name} does not match its checksum")
    try:
        index = SearchIndex.restore(folder, **index_options)
    except Exception as exc:  # a file that passed its checksum but does not load: refuse it
        raise SnapshotRefused(f"{folder} does not load: {exc!r}") from exc
    return index, stamp


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _remove_old(root: Path, keep: str) -> None:
    """Best effort: snapshots other than `keep` (a replica mapping one keeps its pages:
    unlinked files live on while mapped) and temporary folders of writers long gone."""
    now = time.time()
    for entry in root.iterdir():
        try:
            if (entry.name.startswith("snap-") and entry.name != keep) or (
                entry.name.startswith(".tmp-") and now - entry.stat().st_mtime > ABANDONED_SECONDS
            ):
                shutil.rmtree(entry)
        except OSError as exc:
            log.warning("could not remove the old snapshot %s: %s", entry, exc)


__all__ = ["SnapshotStamp", "load_index", "write_snapshot"]
