"""One process at a time on an embedded Chroma folder."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from a2a.errors import StoreFolderUnwritable, StoreLocked


class EmbeddedStoreLock:
    """An exclusive lock on `<data_dir>/cstp.lock`, held for as long as the store is open.

    Chroma's embedded store corrupts or hangs when two processes open it, so a second
    opener fails at once with StoreLocked naming the holder (pid and role).
    """

    def __init__(self, lock_path: Path, role: str) -> None:
        self._path = lock_path
        self._owner_path = lock_path.with_suffix(".owner")
        self._role = role
        self._lock = FileLock(str(lock_path), timeout=0)

    def acquire(self) -> None:
        """Take the lock or raise StoreLocked; StoreFolderUnwritable when the folder cannot
        be written (a read-only mount, another owner), the first thing to write there."""
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._lock.acquire()
            self._owner_path.write_text(f"pid {os.getpid()}, {self._role}\n")
        except Timeout:
            holder = self._owner_path.read_text().strip() if self._owner_path.exists() else "?"
            raise StoreLocked(
                f"the embedded store in {self._path.parent} is in use by another process "
                f"({holder}). Stop it first, or run Chroma as a server (chroma run) and set "
                f"CSTP_CHROMA_URL so that several processes can share it."
            ) from None
        except OSError as exc:  # after Timeout, which is an OSError (TimeoutError) too
            if self._lock.is_locked:
                self._lock.release()
            raise StoreFolderUnwritable(str(self._path.parent), exc.strerror or str(exc)) from None

    def release(self) -> None:
        """Give the lock back (also happens when the process exits)."""
        if self._lock.is_locked:
            self._owner_path.unlink(missing_ok=True)
            self._lock.release()

    def __enter__(self) -> EmbeddedStoreLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
