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


#: What `import a2a.cli.main` must not load: the store, the index and the model, the HTTP
#: server (for `serve`, `index`, `eval`), the indexer (a2a.ingest, with markdown-it, also
#: rich's Markdown: `cstp docs` only), the token table, the rate limiter (`limits`, which the
#: settings load only to parse a limit) and the settings (a client command reads them only
#: without --url, for the address).
NOT_FOR_CLIENT_COMMANDS = (
    "chromadb",
    "faiss",
    "onnxruntime",
    "numpy",
    "starlette",
    "uvicorn",
    "a2a.ingest",
    "markdown_it",
    "a2a.auth.tokens",
    "limits",
    "a2a.settings",
    "pydantic_settings",
)


def test_the_command_line_loads_no_store_until_a_command_needs_one() -> None:
    """`cstp query`, `cstp record` and the other client commands start without chromadb,
    faiss or the embedding model (about 0.3 s of imports saved on every call), nor the
    indexer, `limits` or the settings (about 0.1 s of CPU more); `serve`, `index` and `eval`
    load them when they run. Checked by module, not by time: a regression fails here."""
    probe = (
        "import sys, a2a.cli.main; "
        f"print(sorted(m for m in {NOT_FOR_CLIENT_COMMANDS!r} if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
