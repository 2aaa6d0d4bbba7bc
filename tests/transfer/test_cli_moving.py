"""The real `cstp export` and `cstp import` commands: output, report, exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from a2a.cli import exit_codes
from a2a.cli.main import app
from a2a.embeddings import load_embedder
from tests.conftest import SAMPLE, index_records
from tests.servers import cstp
from tests.transfer.test_moving import FAST, exported, store_of

RUNNER = CliRunner()


@pytest.mark.slow
def test_export_to_a_file_then_import_reports_each_bad_line_and_exits_1(tmp_path: Path) -> None:
    source = store_of(tmp_path / "a", "acme")
    index_records(source, load_embedder(FAST), SAMPLE)
    expected = exported(source)
    source.close()
    out = tmp_path / "acme.jsonl"
    # The configured model is the default, not the collection's: an export needs none.
    env = {"CSTP_DATA_DIR": str(tmp_path / "a")}
    done = cstp("export", "--tenant", "acme", "--out", str(out), "--progress", env=env, timeout=120)
    assert done.returncode == exit_codes.OK, done.stderr
    assert out.read_bytes() == expected
    assert done.stdout == ""
    assert f"exported {len(SAMPLE)} decisions" in done.stderr
    assert re.search(rf"^exporting \S+ {len(SAMPLE)}/{len(SAMPLE)} ", done.stderr, re.M)

    bad = json.dumps({"id": "zz", "title": "Bad", "stakes": "huge"})
    out.write_bytes(expected + bad.encode() + b"\n")
    env = {"CSTP_EMBEDDING_MODEL": FAST, "CSTP_DATA_DIR": str(tmp_path / "b")}
    done = cstp("import", str(out), "--tenant", "acme", "--progress", env=env, timeout=120)
    assert done.returncode == exit_codes.FAILED, done.stderr
    assert f"line {len(SAMPLE) + 1}: stakes: " in done.stderr
    assert re.search(rf"^importing \S+ {len(SAMPLE)}/{len(SAMPLE)} ", done.stderr, re.M)
    summary = f"{len(SAMPLE)} created, 0 unchanged, 0 conflict, 0 replaced, 1 bad"
    assert summary in done.stderr.splitlines()[-1]
    assert exported(store_of(tmp_path / "b", "acme")) == expected


def test_import_of_a_file_that_cannot_be_read_exits_2(tmp_path: Path) -> None:
    result = RUNNER.invoke(app, ["import", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == exit_codes.SETTINGS
    assert "cannot read" in result.output


def test_a_bad_tenant_name_exits_2_before_anything_opens(tmp_path: Path) -> None:
    for command in (["export"], ["import", "-"]):
        result = RUNNER.invoke(app, [*command, "--tenant", "Not A Name"])
        assert result.exit_code == exit_codes.SETTINGS
