"""The `cstp` command: serve the JSON-RPC service, index decision files."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from a2a.auth.tokens import TokenFormatError, load_token_table
from a2a.embeddings import EmbeddingModelError
from a2a.indexer import Indexer, IndexSummary
from a2a.runtime import Runtime
from a2a.settings import Settings, SettingsError, load_settings
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


def _run_index(runtime: Runtime, paths: list[Path]) -> IndexSummary:
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
        indexer.write(records, summary, lambda n: progress.advance(task, n))
    for warning in summary.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}")
    for failure in summary.failures:
        err.print(f"[red]failed:[/red] {failure}")
    err.print(
        f"indexed into {runtime.store.location}: {summary.new} new, {summary.updated} updated, "
        f"{summary.unchanged} unchanged, {summary.failed} failed ({summary.skipped} files skipped)"
    )
    return summary


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of decision records.")],
) -> None:
    """Index decision records (YAML, JSON) and ADRs (Markdown) into the store."""
    settings = _settings()
    runtime = _open(settings, role="cstp index")
    try:
        summary = _run_index(runtime, paths)
    except StoreUnavailable as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_STORE) from None
    finally:
        runtime.close()
    raise typer.Exit(summary.exit_code)


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
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s"
    )
    runtime = _open(settings, role=f"cstp serve on {settings.host}:{settings.port}")
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
        )
        return
    try:
        _index_on_start(runtime, [*settings.index_on_start, *(index_paths or [])])
        uvicorn.run(
            create_app(settings, runtime),
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
        )
    finally:
        runtime.close()


def _index_on_start(runtime: Runtime, paths: list[Path]) -> None:
    if paths:
        try:
            _run_index(runtime, paths)
        except StoreUnavailable as exc:
            err.print(f"[yellow]warning:[/yellow] not indexed, {exc}")


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


def main() -> None:
    """Console-script entry point."""
    app(prog_name="cstp")


if __name__ == "__main__":
    main()
