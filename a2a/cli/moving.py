"""`cstp export` and `cstp import`: a tenant's decisions out to JSON Lines and back in, read
and written in the store directly (CONTRACT.md, "Moving data: export and import").

Exit codes as `cstp index` (a2a.cli.exit_codes): 0 done; 1 some lines were bad or in
conflict (the others imported); 2 a bad setting, option or file; 3 the store or model
cannot be used; 130/143 stopped by SIGINT/SIGTERM.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer
from rich.console import Console
from rich.markup import escape

from a2a.cli import exit_codes
from a2a.cli.options import tenant_name
from a2a.errors import (
    EmbeddingModelError,
    EmbeddingModelMismatch,
    EmbeddingsUnavailable,
    SettingsError,
    StoreFolderUnwritable,
    StoreLocked,
    StoreUnavailable,
)
from a2a.observability.logs import configure_logging
from a2a.tenants.names import collection_of

if TYPE_CHECKING:  # loaded when a command runs: `import a2a.cli.main` stays light
    from rich.progress import Progress

    from a2a.settings import Settings
    from a2a.transfer.importer import ImportSummary

err = Console(stderr=True, highlight=False, soft_wrap=True)
#: What stops an export or an import with exit 3 (exit_codes.STORE).
STORE_FAILURES = (
    StoreLocked,
    StoreFolderUnwritable,
    EmbeddingModelMismatch,
    EmbeddingModelError,
    StoreUnavailable,
)

TenantOption = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        metavar="NAME",
        callback=tenant_name,
        help="This tenant's collection (default: tenant `default`, the store as it was"
        " before tenants).",
    ),
]
ProgressOption = Annotated[
    bool | None,
    typer.Option(
        "--progress/--no-progress",
        help="Show a progress bar on stderr (default: when stderr is a terminal).",
        show_default=False,
    ),
]


def export_command(
    tenant: TenantOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="FILE", help="Write to FILE (replaced when done) instead of stdout."
        ),
    ] = None,
    progress: ProgressOption = None,
) -> None:
    """Export a tenant's decisions as JSON Lines.

    One whole record a line, as cstp.getDecision returns it (history and links included,
    no vectors), sorted by id. Reads the store directly (embedded, or CSTP_CHROMA_URL),
    page by page.
    """
    from a2a.transfer.export import export, opened

    settings = _settings(tenant)
    try:
        with (
            opened(settings, role="cstp export") as store,
            _bar(progress, "exporting") as bar,
            _output(out) as stream,
        ):
            written = export(store, stream, started=bar.start, advance=bar.advance)
    except STORE_FAILURES as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(exit_codes.STORE) from None
    except KeyboardInterrupt:  # --out: the partial file is removed, an earlier one kept
        raise typer.Exit(exit_codes.INTERRUPTED_SIGINT) from None
    except BrokenPipeError:  # `cstp export | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(exit_codes.OK) from None
    err.print(f"exported {written} decisions from {escape(_where(settings))}")


def import_command(
    file: Annotated[
        Path,
        typer.Argument(metavar="FILE", help="JSON Lines from `cstp export` (`-`: stdin)."),
    ],
    tenant: TenantOption = None,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace", help="Overwrite records stored with other content (default: keep them)."
        ),
    ] = False,
    progress: ProgressOption = None,
) -> None:
    """Import decisions from a `cstp export` file.

    They are embedded with the configured model (CSTP_EMBEDDING_MODEL, or a provider's:
    CSTP_EMBEDDING_PROVIDER). A record stored with the same content is unchanged; with
    other content it is a conflict, kept as stored and listed (--replace overwrites it). A
    bad line is reported with its number and skipped; the others are imported. Prints a
    summary: created, unchanged, conflict, replaced, bad.
    """
    from a2a.app.runtime import Runtime
    from a2a.ingest.stopping import exit_now, stop_on_signals
    from a2a.transfer.importer import Importer, ImportSummary

    with _input(file) as stream:
        settings = _settings(tenant)
        summary = ImportSummary()
        try:
            runtime = Runtime.open(settings, role="cstp import")
        except STORE_FAILURES as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(exit_codes.STORE) from None
        with stop_on_signals(_say_stopping, _exit_on_second) as stop:
            try:
                with runtime.writer_locks() as locks:
                    importer = Importer(
                        runtime.store,
                        runtime.embedder,
                        replace=replace,
                        locks=locks,
                    )
                    scan = importer.scan(stream, summary)
                    with _bar(progress, "importing") as bar:
                        bar.start(len(scan.good))
                        importer.run(
                            stream, summary, scan=scan, progress=bar.advance, stop=stop.is_set
                        )
            except (StoreUnavailable, EmbeddingModelError, EmbeddingsUnavailable) as exc:
                _report(summary, settings)
                err.print(f"[red]error:[/red] {escape(str(exc))}")
                raise typer.Exit(exit_codes.STORE) from None
            finally:
                runtime.close()
    _report(summary, settings)
    if summary.interrupted:
        err.print("[yellow]interrupted:[/yellow] run the same command again to import the rest")
        exit_now(stop.exit_code)
    raise typer.Exit(summary.exit_code)


def _report(summary: ImportSummary, settings: Settings) -> None:
    """Each bad line and each conflict, then the summary line, on stderr."""
    for bad in summary.bad:
        err.print(escape(str(bad)))
    for number, record_id in summary.conflicts:
        err.print(
            f"line {number}: conflict: {escape(repr(record_id))} is stored with other content;"
            " kept (--replace overwrites it)"
        )
    err.print(f"imported into {escape(_where(settings))}: {summary.line()}")


def _settings(tenant: str | None) -> Settings:
    """The settings, with the tenant's collection; exit 2 naming a bad setting."""
    from a2a.settings import load_settings

    try:
        settings = load_settings()
        if tenant is not None:
            settings = load_settings(collection=collection_of(settings.collection, tenant))
    except SettingsError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(exit_codes.SETTINGS) from None
    configure_logging(settings.log_level, settings.log_format)
    return settings


def _where(settings: Settings) -> str:
    place = settings.chroma_url or settings.data_dir / "chroma"
    return f"{place} (collection {settings.collection})"


class _Bar:
    """`start(total)` and `advance(n)` of a rich progress bar, or of nothing."""

    def __init__(self, progress: Progress | None, label: str) -> None:
        self._progress, self._label = progress, label
        self._task: object = None

    def start(self, total: int) -> None:
        if self._progress is not None:
            self._task = self._progress.add_task(self._label, total=total)

    def advance(self, n: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)  # type: ignore[arg-type]


@contextmanager
def _bar(wanted: bool | None, label: str) -> Iterator[_Bar]:
    """A progress bar on stderr when `wanted` (default: stderr is a terminal), erased at
    the end on a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    if not (err.is_terminal if wanted is None else wanted):
        yield _Bar(None, label)
        return
    columns = ("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=err, transient=err.is_terminal) as bar:
        yield _Bar(bar, label)


@contextmanager
def _output(out: Path | None) -> Iterator[BinaryIO]:
    """stdout, or a file beside `out` that replaces it once everything is written (a
    failed export leaves an earlier file as it was)."""
    if out is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    partial = out.with_name(f".{out.name}.partial")
    try:
        with partial.open("wb") as stream:
            yield stream
        os.replace(partial, out)
    except OSError as exc:
        err.print(f"[red]error:[/red] cannot write {escape(str(out))}: {exc.strerror}")
        raise typer.Exit(exit_codes.SETTINGS) from None
    finally:
        partial.unlink(missing_ok=True)


@contextmanager
def _input(file: Path) -> Iterator[BinaryIO]:
    """`file` opened for reading (read twice: the import scans it first), or stdin copied
    to a temporary file; exit 2 when it cannot be read."""
    if str(file) == "-":
        with tempfile.TemporaryFile() as copy:
            shutil.copyfileobj(sys.stdin.buffer, copy)
            copy.seek(0)
            yield copy
        return
    try:
        stream = file.open("rb")
    except OSError as exc:
        err.print(f"[red]error:[/red] cannot read {escape(str(file))}: {exc.strerror}")
        raise typer.Exit(exit_codes.SETTINGS) from None
    with stream:
        yield stream


def _say_stopping(sig: signal.Signals) -> None:
    err.print(f"[yellow]{sig.name}:[/yellow] writing what is embedded, then stopping")


def _exit_on_second(sig: signal.Signals) -> None:
    """A second SIGINT/SIGTERM: exit now (128 + its number), as `cstp index` does."""
    from a2a.ingest.stopping import exit_now

    err.print(f"{sig.name} again: exiting now; run the same command again to import the rest")
    err.show_cursor(True)
    exit_now(128 + int(sig))


#: The commands this module adds to `cstp`, by name.
COMMANDS: dict[str, Callable[..., None]] = {"export": export_command, "import": import_command}
