"""The `cstp` command: index decision records, serve them over JSON-RPC, query and evaluate.

Exit codes (a2a.cli.exit_codes): 0 done; 1 some files failed to index, or the service answered
`query` with an error; 2 a bad setting, option or argument; 3 the store or embedding model
cannot be used; 4 the address cannot be bound; 5 the service cannot be reached; 130/143
stopped by SIGINT/SIGTERM.
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from a2a.app.process import configure_process
from a2a.cli import decisions, exit_codes, lifecycle, moving
from a2a.cli.guardrails import guard, guardrails
from a2a.cli.help import PlainHelpCommand, use_plain_help
from a2a.cli.options import tenant_name
from a2a.cli.peers import peers
from a2a.cli.query import query
from a2a.cli.search import docs, similar
from a2a.cli.tenants import tenants
from a2a.errors import (
    EmbeddingModelError,
    EmbeddingModelMismatch,
    EmbeddingsUnavailable,
    SettingsError,
    StartupError,
    StoreFolderUnwritable,
    StoreLocked,
    StoreUnavailable,
)
from a2a.observability.logs import configure_logging
from a2a.tenants.names import collection_of

if TYPE_CHECKING:  # the store, the model and the indexer load only for `serve` and `index`
    from a2a.app.runtime import Runtime
    from a2a.settings import Settings

# What only `index`, `serve` and `eval` use (a2a.cli.indexing, a2a.ingest, a2a.auth.tokens,
# the settings) is imported in them: a client command (query, get, tenants...) starts without
# it, and loads the settings only when it has no --url (a2a.cli.query).

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    # Plain click help: typer's rich panels print Python types (`<list[Path]>`, `<bool>`).
    rich_markup_mode=None,
    help="Decision memory for AI agents: index decision records, serve them over JSON-RPC 2.0,"
    " query and evaluate. Exit codes: 0 done, 1 failed (some files, or the query), 2 bad"
    " settings or options, 3 store or model unusable, 4 address in use, 5 service"
    " unreachable, 130/143 interrupted.",
)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_SETTINGS, EXIT_STORE, EXIT_ADDRESS = (
    exit_codes.SETTINGS,
    exit_codes.STORE,
    exit_codes.ADDRESS,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"cstp {version('cstp')}")
        raise typer.Exit(exit_codes.OK)


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Decision memory for AI agents."""


def _settings(**overrides: Any) -> Settings:
    from a2a.auth.tokens import load_token_table
    from a2a.settings import load_settings

    try:
        settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
        load_token_table(settings)  # CSTP_AUTH_TOKENS(_FILE) checked before anything opens
        return settings
    except SettingsError as exc:  # TokenFormatError among them
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(EXIT_SETTINGS) from None


def _open(settings: Settings, role: str) -> Runtime:
    from a2a.app.runtime import Runtime

    try:
        return Runtime.open(settings, role=role)
    except (
        StoreLocked,
        StoreFolderUnwritable,
        EmbeddingModelMismatch,
        EmbeddingModelError,
        StoreUnavailable,
    ) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(EXIT_STORE) from None


@app.command(cls=PlainHelpCommand, short_help="Index decision records and ADRs into the store.")
def index(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="PATH", help="Files or folders of decision records."),
    ],
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="Show a progress bar (default: when stderr is a terminal); without one,"
            " progress is logged every 5 s.",
            show_default=False,
        ),
    ] = None,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="Then remove records whose file, or record in a file, is not in PATHS any"
            " more (records written over the protocol are never removed).",
        ),
    ] = False,
    tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant",
            metavar="NAME",
            callback=tenant_name,
            help="Index into this tenant's collection (default: tenant `default`, the store"
            " as it was before tenants).",
        ),
    ] = None,
) -> None:
    """Index decision records (YAML, JSON), ADRs (Markdown) and precedent folders into the store.

    Prints a summary at the end: new, updated, unchanged and failed records, skipped files.
    """
    from a2a.cli.indexing import exit_on_second, run_index, say_stopping
    from a2a.ingest.stopping import exit_now, stop_on_signals

    settings = _settings()
    if tenant is not None:
        settings = _settings(collection=collection_of(settings.collection, tenant))
        err.print(f"tenant {tenant}: collection {settings.collection}")
    configure_logging(settings.log_level, settings.log_format)
    configure_process()
    runtime = _open(settings, role="cstp index")
    # The first SIGINT/SIGTERM stores what is embedded, never cuts a write, and ends the run
    # (exit 130/143) without waiting for the model; a second one exits at once.
    with stop_on_signals(say_stopping, exit_on_second) as stop:
        try:
            summary = run_index(
                runtime,
                paths,
                stop=stop,
                progress_bar=progress,
                shared_locks=True,
                prune=prune,
                snapshot=True,
                tenant=tenant,
            )
        except (StoreUnavailable, EmbeddingModelError, EmbeddingsUnavailable) as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(EXIT_STORE) from None
        finally:
            runtime.close()
    if summary.interrupted:
        exit_now(stop.exit_code)  # the model may still be embedding a chunk nobody will store
    raise typer.Exit(summary.exit_code)


@app.command(short_help="Serve JSON-RPC, MCP and the console over HTTP.")
def serve(
    host: Annotated[
        str | None, typer.Option(metavar="HOST", help="Interface to bind (CSTP_HOST).")
    ] = None,
    port: Annotated[int | None, typer.Option(metavar="PORT", help="TCP port (CSTP_PORT).")] = None,
    index_paths: Annotated[
        list[Path] | None,
        typer.Option(
            "--index", metavar="PATH", help="Index these files or folders first; repeatable."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="Server processes (CSTP_WORKERS); more than 1 needs Redis and a Chroma server.",
        ),
    ] = None,
) -> None:
    """Serve the decision memory over HTTP until stopped.

    JSON-RPC 2.0 at POST /cstp (queryDecisions, findSimilarDecisions, recordDecision,
    reviewDecision, getDecision, listDecisions, getCalibration, searchDocs, rpc.discover;
    rpc.discover lists what this version serves), the same methods as MCP tools at /mcp, the
    operator console at GET /console, GET /health, /ready, /metrics and the A2A agent card.
    Settings come from CSTP_* variables and the config file; see the README.
    """
    from a2a.cli.query import default_url
    from a2a.cli.serving import serve_app, serve_workers

    settings = _settings(host=host, port=port, workers=workers)
    _check_workers(settings)
    _check_address(settings.host, settings.port)
    configure_logging(settings.log_level, settings.log_format)
    configure_process()
    runtime = _open(settings, role=f"cstp serve on {settings.host}:{settings.port}")
    application = _app(settings, runtime)
    if settings.workers > 1:
        # Each worker process builds its own app, settings and store from the environment.
        try:
            _index_on_start(runtime, [*settings.index_on_start, *(index_paths or [])])
        finally:
            runtime.close()
        _share_cursor_secret(settings)
        serve_workers(
            "a2a.http.app:app_from_environment",
            settings.workers,
            _uvicorn_options(settings),
            console=f"{default_url(settings)}/console",
        )
        return
    try:
        _index_on_start(runtime, [*settings.index_on_start, *(index_paths or [])])
        serve_app(application, _uvicorn_options(settings), f"{default_url(settings)}/console")
    finally:
        runtime.close()


def _share_cursor_secret(settings: Settings) -> None:
    """Give the worker processes one listDecisions cursor key when none is configured.

    Without it each worker draws its own, and a cursor issued by one is -32602 on the
    others: paging through one address fails on most pages. The key is drawn here and
    passed in the environment the workers inherit (never logged or written anywhere).
    """
    if settings.cursor_secret is None:
        import os
        import secrets

        os.environ["CSTP_CURSOR_SECRET"] = secrets.token_hex(32)


def _index_on_start(runtime: Runtime, paths: list[Path]) -> None:
    if not paths:
        return
    from a2a.cli.indexing import exit_on_second, run_index, say_stopping
    from a2a.ingest.stopping import exit_now, stop_on_signals

    with stop_on_signals(say_stopping, exit_on_second) as stop:
        try:
            summary = run_index(runtime, paths, stop=stop, shared_locks=True)
        except (StoreUnavailable, EmbeddingModelError, EmbeddingsUnavailable) as exc:
            err.print(f"[yellow]warning:[/yellow] not indexed, {exc}")
            return
    if summary.interrupted:
        runtime.close()
        exit_now(stop.exit_code)  # as `cstp index`: not waiting for the model


def _uvicorn_options(settings: Settings) -> dict[str, Any]:
    """How `cstp serve` runs uvicorn, with one process or several."""
    return {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        # Logging is configured before (CSTP_LOG_FORMAT); a2a.access logs each call.
        "log_config": None,
        "access_log": False,
        # X-Forwarded-For is read by a2a.auth.caller, from CSTP_TRUSTED_PROXIES only.
        "proxy_headers": False,
    }


def _app(settings: Settings, runtime: Runtime) -> Any:
    """The app on `runtime`, its state built now: a setting that names methods or docs
    (CSTP_RATE_LIMITS, CSTP_DOCS_CATALOG) exits 2 naming it, not with a traceback."""
    from a2a.http.app import create_app

    try:
        return create_app(settings, runtime)
    except StartupError as exc:
        runtime.close()
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(EXIT_SETTINGS) from None


def _check_address(host: str, port: int) -> None:
    """Exit 4 (exit_codes.ADDRESS) when `host:port` cannot be bound, before the store is opened.

    Bound with SO_REUSEADDR as uvicorn binds, so a port in TIME_WAIT is not a false alarm.
    Only a check: another process may still take the port before uvicorn binds it.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        err.print(f"[red]error:[/red] cannot bind {host}:{port}: {exc.strerror}")
        raise typer.Exit(EXIT_ADDRESS) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            reason = "already in use" if exc.errno == errno.EADDRINUSE else exc.strerror
            err.print(
                f"[red]error:[/red] cannot bind {host}:{port}: {reason}; stop the other"
                " process or choose another port (--port, CSTP_PORT)"
            )
            raise typer.Exit(EXIT_ADDRESS) from None


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


@app.command(
    "eval", cls=PlainHelpCommand, short_help="Score the retrieval modes on labelled queries."
)
def evaluate_command(
    corpus: Annotated[
        Path, typer.Argument(metavar="CORPUS", help="Folder of decision files (e.g. ADRs).")
    ],
    queries: Annotated[
        list[Path],
        typer.Argument(
            metavar="QUERIES",
            help="JSONL files of labelled queries (e.g. a second dev set); each scored apart.",
        ),
    ],
    model: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Embedding model (default: CSTP_EMBEDDING_MODEL)."),
    ] = None,
    modes: Annotated[
        str, typer.Option(metavar="MODES", help="Comma-separated retrieval modes.")
    ] = "semantic,keyword,hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    json_out: Annotated[
        Path | None, typer.Option(metavar="PATH", help="Also write the JSON report to this file.")
    ] = None,
    folds: Annotated[
        int,
        typer.Option(min=0, metavar="K", help="Fusion comparison: k of k-fold CV (0: skip it)."),
    ] = 5,
    repeats: Annotated[int, typer.Option(min=1, metavar="N", help="CV shuffles, averaged.")] = 5,
    seed: Annotated[int, typer.Option(metavar="SEED", help="Seed of the first CV shuffle.")] = 0,
    off_topic: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH", help="Off-topic queries, one a line: measure the distance threshold."
        ),
    ] = None,
) -> None:
    """Index CORPUS into a throw-away store and score every retrieval mode on each QUERIES file.

    Also compares the hybrid fusion methods by repeated k-fold cross-validation over each
    file's queries, printing the spread of held-out fold means (min / median / max), and with
    --off-topic measures the distance that separates a relevant best hit from noise.
    """
    import asyncio
    import json
    import tempfile
    import time

    from a2a.app.stack import evaluation_service, fusion_config
    from a2a.cli.indexing import run_index
    from a2a.evaluation.modes import MODES
    from a2a.evaluation.queries import load_queries
    from a2a.evaluation.report import EvalOptions, report_json, report_text, run_evaluation
    from a2a.evaluation.threshold import load_off_topic

    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    if unknown := set(chosen) - set(MODES):
        err.print(f"[red]error:[/red] unknown modes {sorted(unknown)}; choose from {MODES}")
        raise typer.Exit(EXIT_SETTINGS)
    try:
        sets = [(path, load_queries(path)) for path in queries]
        noise = load_off_topic(off_topic.read_text(encoding="utf-8")) if off_topic else []
    except (OSError, ValueError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(EXIT_SETTINGS) from None
    fewest = min(len(labelled) for _, labelled in sets)
    if folds and not 2 <= folds <= fewest:
        err.print(f"[red]error:[/red] --folds must be 0 or 2..{fewest} (the queries)")
        raise typer.Exit(EXIT_SETTINGS)
    options = EvalOptions(chosen, folds, repeats, seed, noise)
    with tempfile.TemporaryDirectory(prefix="cstp-eval-") as folder:
        overrides: dict[str, Any] = {"data_dir": folder, "chroma_url": "", "collection": "eval"}
        settings = _settings(**overrides, embedding_model=model)
        configure_logging(settings.log_level, settings.log_format)
        runtime = _open(settings, role="cstp eval")
        try:
            started = time.perf_counter()
            summary = run_index(runtime, [corpus])
            header = {
                "model": runtime.embedder.name,
                "records": summary.new + summary.updated + summary.unchanged,
                "index_seconds": round(time.perf_counter() - started, 1),
                "hybrid": f"{fusion_config(settings).describe()}, "
                f"{settings.hybrid_candidates} candidates",
            }
            service = evaluation_service(settings, runtime)
            reports = [
                asyncio.run(
                    run_evaluation(
                        service,
                        labelled,
                        options,
                        {**header, "set": path.name, "queries": len(labelled)},
                    )
                )
                for path, labelled in sets
            ]
        finally:
            runtime.close()
    # One file: its report as before; several: {"sets": [one report per file]}.
    data = (
        report_json(reports[0])
        if len(reports) == 1
        else {"sets": [report_json(r) for r in reports]}
    )
    if json_out is not None:
        json_out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    text = "\n\n".join(report_text(r, options) for r in reports)
    print(json.dumps(data, indent=2) if as_json else text)


app.command("query", cls=PlainHelpCommand, short_help="Search a running service from the shell.")(
    query
)


# The decision commands (record, review, get, list, calibration) and the lifecycle ones
# (update, delete, stats, drift) live in modules of their own.
for name, command in {**decisions.COMMANDS, **lifecycle.COMMANDS}.items():
    app.command(name)(command)
app.command("similar", cls=PlainHelpCommand)(similar)
app.command("docs", cls=PlainHelpCommand)(docs)
app.command("tenants", cls=PlainHelpCommand)(tenants)
app.command("peers", cls=PlainHelpCommand)(peers)
for name, command in moving.COMMANDS.items():
    app.command(name, cls=PlainHelpCommand)(command)
app.command("guard", cls=PlainHelpCommand)(guard)
app.add_typer(guardrails, name="guardrails")
# Last: every command's help without Python type labels, whoever registered it.
use_plain_help(app)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="cstp")


if __name__ == "__main__":
    main()
