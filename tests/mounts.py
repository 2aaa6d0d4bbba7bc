"""Real filesystems for edge tests: a small tmpfs (a disk that fills), a read-only folder.

Mounting needs root (CAP_SYS_ADMIN); without it the disk tests skip, saying why, and a
read-only folder is made with chmod 0555 instead (which does not stop root).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(*args: str) -> str | None:
    """`mount *args`; None when it worked, else why not."""
    if os.geteuid() != 0:
        return "mounting needs root"
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


def _umount(path: Path) -> None:
    # Lazy: a server killed a moment ago may still hold a file open for a few ms.
    subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


@contextmanager
def small_tmpfs(path: Path, size_mib: int) -> Iterator[Path]:
    """A tmpfs of `size_mib` MiB mounted on `path` (created) for the block; skips without
    the right to mount."""
    path.mkdir(parents=True, exist_ok=True)
    why = _mount("-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", str(path))
    if why is not None:
        pytest.skip(f"cannot mount a tmpfs: {why}")
    try:
        yield path
    finally:
        _umount(path)


@contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """`folder` (created) seen read-only for the block: a read-only bind mount of it at
    `folder`.ro (root), else `folder` itself with mode 0555. Yields the read-only path."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        view = folder.with_name(folder.name + ".ro")
        view.mkdir()
        why = _mount("--bind", str(folder), str(view))
        if why is None:
            try:
                why = _mount("-o", "remount,ro,bind", str(view))
                if why is not None:
                    pytest.skip(f"cannot remount a bind mount read-only: {why}")
                yield view
            finally:
                _umount(view)
            return
        pytest.skip(f"root, but cannot bind-mount (and chmod does not stop root): {why}")
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)
