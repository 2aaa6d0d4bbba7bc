"""Revision markers and collection names of embedded folders, kept in memory by their
folder's one writer."""

from __future__ import annotations

import threading


class LocalRevisions:
    """The revision marker of each embedded collection a process has open, by (resolved
    folder, collection name); None for a collection that does not exist yet.

    An embedded folder has one writing process (a2a.store.lock), so after its first read
    the marker is kept here and changed by that process's own writes: reading it costs no
    Chroma call (ChromaDecisionStore.revision). Likewise the folder's collection names once
    listed, with those this process created since (ChromaDecisionStore.collection_names;
    nothing here deletes a collection). Owned by whoever opens the folder: every
    store object on one folder in a process must share one (ChromaDecisionStore's
    `revisions`), or a write through one is not seen through another.
    """

    def __init__(self) -> None:
        self._markers: dict[tuple[str, str], str | None] = {}
        self._listed: dict[str, set[str]] = {}
        self._created: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._markers

    def get(self, key: tuple[str, str]) -> str | None:
        """The marker kept for `key` (KeyError when none is kept)."""
        return self._markers[key]

    def first_read(self, key: tuple[str, str], marker: str | None) -> None:
        """Keep `marker`, read from Chroma, unless a write of this process set one since."""
        with self._lock:
            self._markers.setdefault(key, marker)

    def written(self, key: tuple[str, str], marker: str) -> None:
        """This process changed the marker to `marker`."""
        with self._lock:
            self._markers[key] = marker

    def names(self, folder: str) -> list[str] | None:
        """The collection names of `folder`, sorted: those listed (`listed`) and those
        created since (`created`); None before the folder was listed."""
        with self._lock:
            listed = self._listed.get(folder)
            if listed is None:
                return None
            return sorted(listed | self._created.get(folder, set()))

    def listed(self, folder: str, names: list[str]) -> None:
        """Keep `names`, the collections Chroma listed in `folder`."""
        with self._lock:
            self._listed.setdefault(folder, set()).update(names)

    def created(self, key: tuple[str, str]) -> None:
        """This process created (or opened for a write) collection `key[1]` of `key[0]`:
        kept whether or not the folder was listed yet (a listing under way may have missed
        it)."""
        with self._lock:
            self._created.setdefault(key[0], set()).add(key[1])
