"""Free space on the embedded store's filesystem, checked before each write reaches Chroma.

Why: embedded Chroma (chromadb 1.5.9) writes inside its Rust bindings holding the GIL
(chroma-core/chroma#3873 released it for reads only: "inserts are internally
multithreaded"; #7692, open, for metadata I/O). After a write failed on a full disk, the
next write once space was freed blocked there for good, and with the GIL held no deadline
could fire: every request, /health included, hung (issue 44). A write refused before it
reaches Chroma cannot wedge it, so writes are refused while the free space is under a
margin (CSTP_MIN_FREE_DISK_MIB), and start again by themselves once space is freed.
"""

from __future__ import annotations

import os
from pathlib import Path

from a2a.errors import DiskFull

MIB = 1024 * 1024


def free_bytes(folder: Path) -> int:
    """Bytes an unprivileged writer may still use on the filesystem of `folder` (or of
    its nearest existing parent, before the store's folder is created): statvfs
    `f_bavail * f_frsize`. One system call, no disk I/O: 2-8 µs here (issue 44)."""
    while True:
        try:
            stat = os.statvfs(folder)
        except FileNotFoundError:
            if folder == folder.parent:
                raise
            folder = folder.parent
        else:
            return stat.f_bavail * stat.f_frsize


def require_room(folder: Path, min_free_bytes: int) -> None:
    """Raise DiskFull (CSTP -32003, `data.reason` "disk full") when the filesystem of
    `folder` has less than `min_free_bytes` free; 0 never refuses."""
    if min_free_bytes <= 0:
        return
    free = free_bytes(folder)
    if free < min_free_bytes:
        raise DiskFull(
            f"{free // MIB} MiB free on the filesystem of {folder}, under the "
            f"{min_free_bytes // MIB} MiB kept free (CSTP_MIN_FREE_DISK_MIB): write refused"
        )
