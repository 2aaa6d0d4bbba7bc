"""Ctrl-C during `cstp index` as a user presses it: a real process on a pseudo-terminal, in
a process group of its own (a shell's job), SIGINT sent to the whole group as a terminal
sends it, the default model."""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.servers import BIN

pytestmark = pytest.mark.slow

#: Records of ~300 words, ~2 of the default model's windows each: the model takes more
#: than 10 s for all of them (~12 s on 2 quiet cores), ~3 s for a chunk of them.
RECORDS, WORDS = 120, 300
#: docs/cli.md: a stop "answers within a second or two" (measured 0.2-0.7 s). The bound
#: leaves room for a CI machine loaded by the other worker, and still fails the reported
#: stop, which went on for 214 s and 266 s.
STOP_SECONDS = 5.0
_WORDS = (
    "cache queue ledger invoice tenant replica shard index vector model batch latency"
    " throughput budget retry timeout deadline schema migration column table partition lock"
    " writer reader event stream broker topic consumer producer service gateway token scope"
    " audit metric alert dashboard deploy rollback canary cluster node region zone backup"
)
_ESCAPE = re.compile(rb"\x1b\[[0-9;?]*[a-zA-Z]")
_BAR = re.compile(rb"indexing [^\r\n0-9]*(\d+)/(\d+)")


def write_records(folder: Path) -> None:
    words, vocabulary = random.Random(7), _WORDS.split()
    records = [
        {
            "id": f"r{i:04d}",
            "title": f"Decision {i} on the {words.choice(vocabulary)}",
            "context": " ".join(words.choice(vocabulary) for _ in range(WORDS)),
        }
        for i in range(RECORDS)
    ]
    folder.mkdir()
    (folder / "records.yaml").write_text(yaml.safe_dump(records))


class Terminal:
    """`cstp index FOLDER` on a pseudo-terminal; what it prints, as a terminal shows it."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        primary, secondary = os.openpty()
        self.process = subprocess.Popen(
            [str(BIN / "cstp"), "index", str(folder)],
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            env={**os.environ, **env, "TERM": "xterm", "COLUMNS": "120"},
            start_new_session=True,  # its own process group, which Ctrl-C is sent to
        )
        os.close(secondary)
        self._primary, self._output = primary, bytearray()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._primary, 65536)
            except OSError:  # EIO once the process has gone
                break
            if not chunk:
                break
            self._output.extend(chunk)
        os.close(self._primary)

    def shown(self) -> int:
        """The records done according to the progress bar's latest state."""
        counts = _BAR.findall(_ESCAPE.sub(b"", bytes(self._output)))
        return int(counts[-1][0]) if counts else 0

    def wait_for_progress(self, seconds: float = 180) -> int:
        """The bar's count once it is past 0 (the model has embedded a chunk)."""
        deadline = time.monotonic() + seconds
        while (shown := self.shown()) == 0:
            assert self.process.poll() is None, self.text()
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.05)
        return shown

    def ctrl_c(self) -> None:
        """SIGINT to the foreground process group: `cstp index` and its children alike."""
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(self.process.pid, signal.SIGINT)

    def wait(self) -> tuple[int, float]:
        """(exit code, seconds it took from now)."""
        started = time.monotonic()
        code = self.process.wait(timeout=120)
        return code, time.monotonic() - started

    def text(self) -> str:
        time.sleep(0.2)  # the last bytes from the pty
        return _ESCAPE.sub(b"", bytes(self._output)).decode(errors="replace")


def test_ctrl_c_stores_what_is_embedded_and_exits_at_once(
    tmp_path: Path,
) -> None:
    """Reported: after Ctrl-C, `cstp index` said it was stopping, then went on for 214 s
    and 266 s; a second Ctrl-C did nothing, and nothing was stored."""
    folder = tmp_path / "records"
    write_records(folder)
    env = {"CSTP_DATA_DIR": str(tmp_path / "data")}

    first = Terminal(folder, env)
    shown = first.wait_for_progress()
    first.ctrl_c()
    code, took = first.wait()
    output = first.text()
    assert code == 130, output
    assert took < STOP_SECONDS, (took, output)
    stored = int(re.findall(r"interrupted by SIGINT after (\d+) of 120 records", output)[0])
    assert shown <= stored < RECORDS, output  # every record the bar had counted is stored
    assert f"indexed into {tmp_path / 'data' / 'chroma'}: {stored} new, 0 updated" in output

    second = Terminal(folder, env)
    second.wait_for_progress()
    second.ctrl_c()
    time.sleep(0.05)
    second.ctrl_c()
    code, took = second.wait()
    output = second.text()
    assert code == 130, output
    assert took < STOP_SECONDS, (took, output)
    assert "Traceback" not in output
