"""The `cstp` command: serve the JSON-RPC service, index decision files."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from a2a.auth.tokens import TokenFormatError, load_token_table
from a2a.embeddings import EmbeddingModelError
from a2a.indexer import Indexer, IndexSummary
from a2a.observability.logs import configure_logging
from a2a.runtime import Runtime
from a2a.settings import Settings, SettingsError, load_settings
from a2a.stopping import StopRequest, stop_on_signals
from a2a.store import EmbeddingModelMismatch, StoreLocked, StoreUnavailable

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
err = Console(stderr=True, highlight=False, soft_wrap=True)

#: Exit codes: 1 some files failed to index, 2 bad settings, 3 store/model not usable.
EXIT_FILES_FAILED, EXIT_SETTINGS, EXIT_STORE = 1, 2, 3


def _settings(**overrides: Any) -> Settings:
    try:
        return load_settings(**{k: v for k, v in overrides.items() if v is not None})
    except SettingsError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_SETTINGS) from None


def _open(settings: Settings, role: str) -> Runtime:
    try:
        return Runtime.open(settings, role=role)
    except (StoreLocked, EmbeddingModelMismatch, EmbeddingModelError, StoreUnavailable) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_STORE) from None


def _run_index(
    runtime: Runtime, paths: list[Path], stop: StopRequest | None = None
) -> IndexSummary:
    indexer = Indexer(runtime.store, runtime.embedder)
    summary = IndexSummary()
    records = indexer.load(paths, summary)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal,
        transient=True,
    ) as progress:
        task = progress.add_task("indexing", total=len(records))
        indexer.write(
            records,
            summary,
            lambda n: progress.advance(task, n),
            stop=None if stop is None else stop.is_set,
        )
    for warning in summary.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}")
    for failure in summary.failures:
        err.print(f"[red]failed:[/red] {failure}")
    err.print(
        f"indexed into {runtime.store.location}: {summary.new} new, {summary.updated} updated, "
        f"{summary.unchanged} unchanged, {summary.failed} failed ({summary.skipped} files skipped)"
    )
    if summary.interrupted and stop is not None and stop.signal is not None:
        done = summary.new + summary.updated + summary.unchanged
        err.print(
            f"[yellow]interrupted[/yellow] by {stop.signal.name} after {done} of {len(records)}"
            " records; run the same command again to index the rest"
        )
    return summary


def _say_stopping(sig: signal.Signals) -> None:
    err.print(f"{sig.name}: stopping once the batch being written is stored")


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of decision records.")],
) -> None:
    """Index decision records (YAML, JSON) and ADRs (Markdown) into the store."""
    settings = _settings()
    runtime = _open(settings, role="cstp index")
    # SIGINT/SIGTERM never cut a write: the batch being stored finishes, then the run stops,
    # prints what it did and exits 130/143.
    with stop_on_signals(_say_stopping) as stop:
        try:
            summary = _run_index(runtime, paths, stop)
        except StoreUnavailable as exc:
            err.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(EXIT_STORE) from None
        finally:
            runtime.close()
    raise typer.Exit(stop.exit_code if summary.interrupted else summary.exit_code)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind (CSTP_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port (CSTP_PORT).")] = None,
    index_paths: Annotated[
        list[Path] | None,
        typer.Option("--index", help="Index these files or folders before serving."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Server processes (CSTP_WORKERS); >1 needs Redis and Chroma."),
    ] = None,
) -> None:
    """Serve cstp.queryDecisions over JSON-RPC 2.0 at POST /cstp."""
    import uvicorn

    from a2a.http.app import create_app

    settings = _settings(host=host, port=port, workers=workers)
    _check_workers(settings)
    try:
        load_token_table(settings)
    except TokenFormatError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_SETTINGS) from None
    configure_logging(settings.log_level, settings.log_format)
    runtime = _open(settings, role=f"cstp serve on {settings.host}:{settings.port}")
    _check_method_settings(settings, runtime)
    if settings.workers > 1:
        # Each worker process builds its own app, settings and store from the environment.
        try:
            _index_on_start(runtime, [*settings.index_on_start, *(index_paths or [])])
        finally:
            runtime.close()
        uvicorn.run(
            "a2a.http.app:app_from_environment",
            factory=True,
            workers=settings.workers,
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            # Logging is configured above (CSTP_LOG_FORMAT); a2a.access logs each call.
            log_config=None,
            access_log=False,
        )
        return
    try:
        _index_on_start(runtime, [*settings.index_on_start, *(index_paths or [])])
        uvicorn.run(
            create_app(settings, runtime),
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            # Logging is configured above (CSTP_LOG_FORMAT); a2a.access logs each call.
            log_config=None,
            access_log=False,
        )
    finally:
        runtime.close()


def _index_on_start(runtime: Runtime, paths: list[Path]) -> None:
    if not paths:
        return
    with stop_on_signals(_say_stopping) as stop:
        try:
            summary = _run_index(runtime, paths, stop)
        except StoreUnavailable as exc:
            err.print(f"[yellow]warning:[/yellow] not indexed, {exc}")
            return
    if summary.interrupted:
        raise typer.Exit(stop.exit_code)


def _check_method_settings(settings: Settings, runtime: Runtime) -> None:
    """Settings that name methods or docs, checked against the method table the app builds.

    Exits 2 naming the setting (CSTP_RATE_LIMITS, CSTP_DOCS_CATALOG) instead of letting
    the app's start-up fail with a traceback.
    """
    from a2a.docs.catalog import CatalogError
    from a2a.http.app import service_methods
    from a2a.limits.config import LimitPolicy
    from a2a.store import AsyncStore

    try:
        store = AsyncStore(runtime.store, settings.chroma_timeout_seconds)
        methods = service_methods(settings, store, runtime.embedder)
        LimitPolicy.from_strings(settings.rate_limit_default, settings.rate_limits, methods)
    except (ValueError, CatalogError) as exc:
        runtime.close()
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_SETTINGS) from None


def _check_workers(settings: Settings) -> None:
    """Refuse several workers that would each keep their own limits or fight over one store."""
    if settings.workers == 1:
        return
    problem = None
    if settings.rate_limit_storage.startswith("memory"):
        problem = (
            "memory:// rate limits are per process, so each worker would allow the full limit;"
            " set CSTP_RATE_LIMIT_STORAGE=redis://HOST:6379"
        )
    elif settings.chroma_url is None:
        problem = "the embedded store has one owner process; set CSTP_CHROMA_URL to a Chroma server"
    if problem:
        err.print(f"[red]error:[/red] CSTP_WORKERS={settings.workers}: {problem}")
        raise typer.Exit(EXIT_SETTINGS)


@app.command("eval")
def evaluate_command(
    corpus: Annotated[Path, typer.Argument(help="Folder of decision files (e.g. ADRs).")],
    queries: Annotated[Path, typer.Argument(help="JSONL of labelled queries.")],
    model: Annotated[
        str | None, typer.Option(help="Embedding model (default: CSTP_EMBEDDING_MODEL).")
    ] = None,
    modes: Annotated[
        str, typer.Option(help="Comma-separated retrieval modes.")
    ] = "semantic,keyword,hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    json_out: Annotated[
        Path | None, typer.Option(help="Also write the JSON report to this file.")
    ] = None,
    folds: Annotated[
        int, typer.Option(min=0, help="Fusion comparison: k of k-fold CV (0: skip it).")
    ] = 5,
    repeats: Annotated[int, typer.Option(min=1, help="CV shuffles, averaged.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the first CV shuffle.")] = 0,
    off_topic: Annotated[
        Path | None,
        typer.Option(help="Off-topic queries, one a line: measure the distance threshold."),
    ] = None,
) -> None:
    """Index CORPUS into a throw-away store and score every retrieval mode on QUERIES.

    Also compares the hybrid fusion methods by k-fold cross-validation over the queries,
    and with --off-topic measures the distance that separates a relevant best hit from noise.
    """
    import asyncio
    import json
    import tempfile
    import time

    from a2a.evaluation import MODES, load_queries
    from a2a.evaluation.report import EvalOptions, report_json, report_text, run_evaluation
    from a2a.evaluation.threshold import load_off_topic
    from a2a.http.app import fusion_config, hybrid_config
    from a2a.query.service import QueryService
    from a2a.store import AsyncStore

    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    if unknown := set(chosen) - set(MODES):
        err.print(f"[red]error:[/red] unknown modes {sorted(unknown)}; choose from {MODES}")
        raise typer.Exit(EXIT_SETTINGS)
    try:
        labelled = load_queries(queries)
        noise = load_off_topic(off_topic.read_text(encoding="utf-8")) if off_topic else []
    except (OSError, ValueError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_SETTINGS) from None
    if folds and not 2 <= folds <= len(labelled):
        err.print(f"[red]error:[/red] --folds must be 0 or 2..{len(labelled)} (the queries)")
        raise typer.Exit(EXIT_SETTINGS)
    options = EvalOptions(chosen, folds, repeats, seed, noise)
    with tempfile.TemporaryDirectory(prefix="cstp-eval-") as folder:
        overrides: dict[str, Any] = {"data_dir": folder, "chroma_url": "", "collection": "eval"}
        settings = _settings(**overrides, embedding_model=model)
        runtime = _open(settings, role="cstp eval")
        try:
            started = time.perf_counter()
            summary = _run_index(runtime, [corpus])
            header = {
                "model": settings.embedding_model,
                "records": summary.new + summary.updated + summary.unchanged,
                "queries": len(labelled),
                "index_seconds": round(time.perf_counter() - started, 1),
                "hybrid": f"{fusion_config(settings).describe()}, "
                f"{settings.hybrid_candidates} candidates",
            }
            store = AsyncStore(runtime.store, settings.chroma_timeout_seconds)
            service = QueryService(store, runtime.embedder, "eval", hybrid=hybrid_config(settings))
            report = asyncio.run(run_evaluation(service, labelled, options, header))
        finally:
            runtime.close()
    if json_out is not None:
        json_out.write_text(json.dumps(report_json(report), indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report_json(report), indent=2) if as_json else report_text(report, options))


@app.command()
def query(
    text: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for, in words.")],
    category: Annotated[str | None, typer.Option(help="Exact category filter.")] = None,
    status: Annotated[
        list[str] | None, typer.Option(help="Status filter; repeat for several.")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Most decisions returned (1..50).")] = None,
    url: Annotated[
        str, typer.Option(envvar="CSTP_URL", help="The service's base URL.")
    ] = "http://127.0.0.1:8000",
    token: Annotated[
        str | None, typer.Option(envvar="CSTP_TOKEN", help="Bearer token of the calling agent.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON result.")] = False,
    max_distance: Annotated[
        float | None,
        typer.Option(min=0, max=2, help="Leave out results past this cosine distance (0..2)."),
    ] = None,
) -> None:
    """Ask a running service for decisions (cstp.queryDecisions) and print them."""
    from a2a.client.command import run_query

    # Piped output gets a wide page, so ids and titles are never wrapped mid-word.
    out = Console(highlight=False, soft_wrap=as_json, width=None if sys.stdout.isatty() else 200)
    code = run_query(
        text,
        url=url,
        token=token,
        category=category,
        status=status,
        limit=limit,
        as_json=as_json,
        max_distance=max_distance,
        out=out,
        err=err,
    )
    raise typer.Exit(code)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="cstp")


if __name__ == "__main__":
    main()
