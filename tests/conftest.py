"""Shared fixtures: the real embedding model, real embedded Chroma, the app over ASGI."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from filelock import FileLock
from starlette.applications import Starlette

from a2a.app.runtime import Runtime
from a2a.embeddings import DEFAULT_MODEL, Embedder, load_embedder
from a2a.errors import InvalidParams
from a2a.http.app import create_app
from a2a.ingest.indexer import Indexer, IndexSummary
from a2a.records import DecisionRecord
from a2a.rpc.methods import Method
from a2a.settings import Settings, load_settings
from a2a.store.chroma import ChromaDecisionStore

REPO = Path(__file__).resolve().parents[1]
#: ../shared next to the repository, as on developers' machines and in CI.
SHARED = REPO.parent / "shared"
ADR_CORPUS = SHARED / "data" / "adr"
DEV_QUERIES = SHARED / "data" / "queries-dev.jsonl"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with end-to-end tests (marked `slow`) run first. `make test` hands whole files
    to two workers in collection order; a long file collected last kept one worker busy
    while the other sat idle at the end of the run. Within a file the order is unchanged."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)


#: The decisions in the ADR corpus: one per file, except SOURCES.md (the corpus' list of
#: repositories), which is not a decision and is skipped.
ADR_RECORDS = 409


def require_shared() -> None:
    """Skip, saying why, when ../shared/data is not beside the repository."""
    if not ADR_CORPUS.is_dir():
        pytest.skip(f"real ADR corpus not found at {ADR_CORPUS} (../shared/data is absent)")


def invalid_fields(method: Method, params: Any) -> list[str]:
    """The fields named by the -32602 (InvalidParams) `method` answers `params` with."""
    with pytest.raises(InvalidParams) as caught:
        method.validate(params)
    return [error.field for error in caught.value.errors]


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


#: A small store whose every field and filter value is known, for exact filter tests
#: (tests/data/sample.json; its dates keep the offsets they were written with).
SAMPLE = [
    DecisionRecord.model_validate(
        {**fields, "date": utc(fields["date"])} if "date" in fields else fields
    )
    for fields in json.loads((Path(__file__).parent / "data" / "sample.json").read_text())
]


#: SAMPLE's d01 as every summary on the wire shows it (a served store adds its tenant).
D01_SUMMARY = {
    "id": "d01",
    "title": "Use blue-green deployment for the invoices database migration",
    "category": "architecture",
    "confidence": 0.9,
    "stakes": "high",
    "status": "reviewed",
    "outcome": "success",
    "date": "2026-01-20T14:00:00Z",
    "source": "a.yaml",
    "recordedBy": None,
    "tenant": None,
}
#: Every filter of queryDecisions at once (SAMPLE's d01 passes them all).
EVERY_FILTER = {
    "category": "architecture",
    "minConfidence": 0.7,
    "maxConfidence": 1.0,
    "dateAfter": "2026-01-01T00:00:00Z",
    "dateBefore": "2026-12-31T23:59:59Z",
    "stakes": ["medium", "high"],
    "status": ["decided", "reviewed"],
}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's CSTP_* variables."""
    for name in list(os.environ):
        if name.startswith("CSTP_"):
            monkeypatch.delenv(name)


@pytest.fixture
def use_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Writes the text it is given to a cstp.yaml that CSTP_CONFIG then names."""

    def write(text: str) -> None:
        config = tmp_path / "cstp.yaml"
        config.write_text(text)
        monkeypatch.setenv("CSTP_CONFIG", str(config))

    return write


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The default offline model, loaded once for the whole run."""
    return load_embedder(DEFAULT_MODEL)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", agent_id="test-agent")


@pytest.fixture
def store(settings: Settings, embedder: Embedder) -> Iterator[ChromaDecisionStore]:
    store = ChromaDecisionStore(
        data_dir=settings.data_dir / "chroma",
        collection=settings.collection,
        embedding_model=embedder.name,
    )
    yield store
    store.close()


@pytest.fixture(scope="session")
def sample_store(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[ChromaDecisionStore]:
    """SAMPLE indexed once for the whole run, for tests that only read it.

    A test that writes takes `store` (a fresh one each) instead: a write here would leak
    into every later test.
    """
    data_dir = tmp_path_factory.mktemp("sample-store")
    store = ChromaDecisionStore(
        data_dir=data_dir / "chroma",
        collection=load_settings(data_dir=data_dir).collection,
        embedding_model=embedder.name,
    )
    index_records(store, embedder, SAMPLE)
    yield store
    store.close()


def index_records(
    store: ChromaDecisionStore,
    embedder: Embedder,
    records: list[DecisionRecord],
    at: datetime | None = None,
) -> IndexSummary:
    """`cstp index` of `records`; `at`: the indexer's clock (default: now)."""
    summary = IndexSummary()
    if at is None:
        Indexer(store, embedder).write(records, summary)
    else:
        Indexer(store, embedder, clock=lambda: at).write(records, summary)
    return summary


@asynccontextmanager
async def served_app(
    settings: Settings, embedder: Embedder
) -> AsyncIterator[tuple[Starlette, httpx.AsyncClient]]:
    """The app, with its lifespan running on an opened runtime, and a client over ASGI."""
    runtime = Runtime.open(settings, role="test", embedder=embedder)
    app = create_app(settings, runtime)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://cstp.test") as c:
                yield app, c
    finally:
        runtime.close()


@asynccontextmanager
async def app_client(settings: Settings, embedder: Embedder) -> AsyncIterator[httpx.AsyncClient]:
    """The app over ASGI with its lifespan running, on an opened runtime."""
    async with served_app(settings, embedder) as (_, client):
        yield client


def rpc_call(method: str, params: Any = None, id: Any = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        body["params"] = params
    return body


def _run_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every pytest-xdist worker of this run shares (the base temporary folder
    without xdist): the first worker to need a template store makes it there, under a
    lock, and the others wait and reuse it (never written after it is made)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return tmp_path_factory.getbasetemp().parent
    return tmp_path_factory.getbasetemp()


@pytest.fixture(scope="session")
def adr_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder holding the ADR corpus indexed with the default model, made once.

    It is indexed as `cstp index` does (the same loader, `Indexer` and embedded Chroma),
    with the model's vectors of the corpus read from tests/data (tests/adr_vectors.py)
    rather than computed again. Tests that serve the corpus copy it (`copy_store`).
    """
    from tests.adr_vectors import StoredVectors

    require_shared()
    shared = _run_directory(tmp_path_factory)
    data_dir = shared / "adr-store-template"
    with FileLock(str(shared / "adr-store-template.lock")):
        if not (data_dir / "indexed").exists():
            shutil.rmtree(data_dir, ignore_errors=True)
            model = StoredVectors(load_embedder(DEFAULT_MODEL))
            runtime = Runtime.open(load_settings(data_dir=data_dir), role="index", embedder=model)
            try:
                indexer = Indexer(runtime.store, runtime.embedder)
                summary = IndexSummary()
                indexer.write(Indexer.load([ADR_CORPUS], summary), summary)
            finally:
                runtime.close()
            assert (summary.new, summary.failed, summary.skipped) == (ADR_RECORDS, 0, 1)
            (data_dir / "indexed").write_text(f"{summary.new} new; {model.missed} embedded")
    return data_dir


#: The bearer tokens of examples_service, by agent.
EXAMPLES_TOKENS = {
    "cli": "cli-token-0123456789",
    "smoke": "smoke-token",
    "mcp": "readme-mcp-token-0123456789",
}


@pytest.fixture(scope="session")
def examples_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real `cstp serve` over a copy of the example decisions indexed once a run
    (_examples_store: default model; auth on with EXAMPLES_TOKENS), started once a session
    for the modules that only read them (the CLI's client commands, scripts/smoke.sh, the
    README's MCP example); its base URL.

    A module that writes, limits or stops its server starts its own.
    """
    from tests.servers import free_port, start_cstp, stop

    port = free_port()
    data_dir = tmp_path_factory.mktemp("examples-service")
    copy_store(_examples_store(tmp_path_factory), data_dir)
    env = {
        "CSTP_DATA_DIR": str(data_dir),
        "CSTP_AUTH_TOKENS": ",".join(f"{a}:{t}" for a, t in EXAMPLES_TOKENS.items()),
    }
    server = start_cstp(port, env)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(server)


def _examples_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder holding the example decisions as `cstp index` with the default model
    writes them, made once a run for every worker (the model takes seconds over them;
    `cstp serve --index` is tested where it is the subject, tests/test_cli.py)."""
    from tests.servers import cstp

    shared = _run_directory(tmp_path_factory)
    data_dir = shared / "examples-store-template"
    with FileLock(str(shared / "examples-store-template.lock")):
        if not (data_dir / "indexed").exists():
            shutil.rmtree(data_dir, ignore_errors=True)
            indexed = cstp(
                "index", str(REPO / "examples" / "decisions"), env={"CSTP_DATA_DIR": str(data_dir)}
            )
            assert indexed.returncode == 0, indexed.stderr
            assert "48 new, 0 updated, 0 unchanged, 0 failed" in indexed.stderr, indexed.stderr
            (data_dir / "indexed").write_text(indexed.stderr)
    return data_dir


def copy_store(template: Path, data_dir: Path) -> None:
    """Give `data_dir` its own copy of the store in `template` (no process may hold either)."""
    shutil.copytree(template / "chroma", data_dir / "chroma")
