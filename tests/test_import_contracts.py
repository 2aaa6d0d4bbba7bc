"""The import contracts of pyproject.toml ([tool.importlinter]): no cycle between a2a's
packages, settings a leaf, the index below the services, the layers. `lint-imports` is
import-linter's command; it reads the source, it imports nothing of a2a."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def test_the_import_contracts_are_kept() -> None:
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_command_line_loads_no_store_until_a_command_needs_one() -> None:
    """`cstp query`, `cstp record` and the other client commands start without chromadb,
    faiss or the embedding model (about 0.3 s of imports saved on every call); `serve` and
    `index` load them when they run."""
    probe = (
        "import sys, a2a.cli.main; "
        "print(sorted(m for m in ('chromadb', 'faiss', 'onnxruntime') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
