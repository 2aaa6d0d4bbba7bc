"""Issue 44 item 4: `cstp serve` on a read-only data folder exits with one line naming the
folder, like the other start-up errors, not a 160-line traceback. A real read-only bind
mount (tests/mounts.py) and the real command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.decisions.wire import FAST_MODEL
from tests.mounts import read_only
from tests.servers import cstp, free_port

#: exit_codes: the store cannot be opened (as for a store locked by another process).
EXIT_STORE = 3


@pytest.mark.parametrize("below", ["", "new"], ids=["the-folder", "a-folder-to-create-in-it"])
def test_serve_on_a_read_only_data_folder_is_one_line_naming_it(tmp_path: Path, below: str) -> None:
    with read_only(tmp_path / "data") as folder:
        data = folder / below if below else folder
        done = cstp(
            "serve",
            "--port",
            str(free_port()),
            env={"CSTP_DATA_DIR": str(data), "CSTP_EMBEDDING_MODEL": FAST_MODEL},
            timeout=120,
        )
    assert done.returncode == EXIT_STORE, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: the data folder "), lines
    assert str(data) in lines[0], lines
    assert "Traceback" not in done.stderr + done.stdout
