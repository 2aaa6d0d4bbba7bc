"""`cstp record|review|get|list|calibration`: the decision methods from the shell."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from a2a.cli import exit_codes
from a2a.cli.options import (  # the shared options, by the names this module has always used
    Connection,
    PeerName,
    Tenant,
    TenantOrEvery,
    shared_options,
)
from a2a.cli.query import default_url, print_error
from a2a.client import DecisionMetadata
from a2a.client.clients import CSTPClient
from a2a.client.errors import CSTPError, TransportError
from a2a.errors import SettingsError
from a2a.rpc.protocol import to_wire

#: Exit codes, as for `cstp query` (a2a.cli.exit_codes): 0 answered, 1 the service returned an
#: error, 2 the decision file (or a setting) could not be read, 5 the service could not be
#: reached.
EXIT_OK, EXIT_ERROR, EXIT_INPUT = exit_codes.OK, exit_codes.FAILED, exit_codes.SETTINGS
EXIT_UNREACHABLE = exit_codes.UNREACHABLE

err = Console(stderr=True, highlight=False, soft_wrap=True)


def _out(as_json: bool) -> Console:
    # Piped output gets a wide page, so ids and titles are never wrapped mid-word.
    return Console(highlight=False, soft_wrap=as_json, width=None if sys.stdout.isatty() else 200)


@contextmanager
def _client(connection: Connection, tenant: str | None = None) -> Iterator[CSTPClient]:
    """A client whose errors end the command with the error on stderr: exit 5 when the
    service could not be reached, else 1. Without a URL, the address `cstp serve` binds
    with the same settings (as `cstp query`). `tenant` (--tenant) goes on every call."""
    url = connection.url
    if url is None:
        from a2a.settings import load_settings  # only without --url

        try:
            url = default_url(load_settings())
        except SettingsError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(EXIT_INPUT) from None
    try:
        with CSTPClient(url, connection.token, tenant=tenant) as client:
            yield client
    except CSTPError as exc:
        print_error(exc, err, token=connection.token)
        code = EXIT_UNREACHABLE if isinstance(exc, TransportError) else EXIT_ERROR
        raise typer.Exit(code) from None


def read_decisions(source: str) -> list[dict[str, Any]]:
    """The decision(s) in a YAML or JSON file, or stdin for `-`: one mapping or a list.

    Raises ValueError saying what is wrong with the file.
    """
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        loaded = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{source}: {exc}") from None
    items = loaded if isinstance(loaded, list) else [loaded]
    if not items or not all(isinstance(item, dict) for item in items):
        raise ValueError(f"{source}: expected a decision (a mapping) or a list of them")
    # YAML reads an unquoted date as a date object; the wire wants RFC 3339 text.
    return [json.loads(json.dumps(item, default=str)) for item in items]


@shared_options()
def record(
    file: Annotated[str, typer.Argument(metavar="FILE|-", help="YAML or JSON decision(s).")],
    tenant: Tenant = None,
    *,
    connection: Connection,
) -> None:
    """Record decisions (cstp.recordDecision, scope write); prints each id.

    With --json, one `{"id", "created"}` object per line.
    """
    try:
        decisions = read_decisions(file)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(EXIT_INPUT) from None
    out = _out(connection.as_json)
    with _client(connection, tenant) as client:
        for decision in decisions:
            result = client.record_decision(decision)
            if connection.as_json:  # JSON Lines: one object per line, one line per decision
                print(json.dumps(to_wire(result)), flush=True)
            else:
                out.print(f"{result.id} {'created' if result.created else 'already recorded'}")


@shared_options()
def review(
    decision_id: Annotated[str, typer.Argument(metavar="ID")],
    outcome: Annotated[
        str,
        typer.Option(metavar="OUTCOME", help="success, partial, failure, abandoned or pending."),
    ],
    status: Annotated[
        str | None,
        typer.Option(metavar="STATUS", help="reviewed (default), superseded or deprecated."),
    ] = None,
    lessons: Annotated[
        str | None, typer.Option(metavar="LESSONS", help="What was learned (<= 4,000 chars).")
    ] = None,
    reviewed_at: Annotated[
        str | None, typer.Option(metavar="DATETIME", help="RFC 3339 with offset; default now.")
    ] = None,
    tenant: Tenant = None,
    *,
    connection: Connection,
) -> None:
    """Review a decision (cstp.reviewDecision, scope write); prints its summary."""
    with _client(connection, tenant) as client:
        summary = client.review_decision(
            decision_id, outcome, status=status, lessons=lessons, reviewed_at=reviewed_at
        )
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(summary.model_dump(by_alias=True)))
    else:
        out.print(summaries_table([summary], "reviewed"))


@shared_options()
def get(
    decision_id: Annotated[str, typer.Argument(metavar="ID")],
    tenant: Tenant = None,
    peer: PeerName = None,
    *,
    connection: Connection,
) -> None:
    """Print one whole decision record (cstp.getDecision); with --peer, a peer service's
    (a row of `cstp query --peers` whose peer column names it)."""
    with _client(connection, tenant) as client:
        record = client.get_decision(decision_id, peer=peer)
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(to_wire(record)))
        return
    for label, text in record_lines(to_wire(record)):
        out.print(f"[bold]{escape(label)}[/bold]: {escape(text)}")


def record_lines(wire: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of each line `cstp get` prints for a decision's wire form: its fields
    as they are (null ones left out), one line per reason, the tags as a list, one line per
    kind of link that has any (`links.relatedTo: id, id`), one JSON line per history entry.
    """
    spelled = ("reasons", "tags", "links", "history")
    lines = [
        (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for key, value in wire.items()
        if value is not None and key not in spelled
    ]
    lines += [(f"reason ({r['type']})", r["text"]) for r in wire.get("reasons") or []]
    if wire.get("tags"):
        lines.append(("tags", ", ".join(wire["tags"])))
    for kind, ids in (wire.get("links") or {}).items():
        if ids:
            lines.append((f"links.{kind}", ", ".join(ids)))
    lines += [("history", json.dumps(c, ensure_ascii=False)) for c in wire.get("history") or []]
    return lines


@shared_options()
def list_command(
    filters: dict[str, Any] | None = None,
    order: Annotated[
        str | None, typer.Option(metavar="ORDER", help="dateDesc (default) or dateAsc.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(metavar="1..100", help="Decisions per page (default 20).")
    ] = None,
    cursor: Annotated[
        str | None, typer.Option(metavar="CURSOR", help="nextCursor of an earlier page.")
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Follow the cursor to the end.")] = False,
    tenant: Tenant = None,
    *,
    connection: Connection,
) -> None:
    """List decisions in date order (cstp.listDecisions), a page or (--all) every one."""
    out = _out(connection.as_json)
    with _client(connection, tenant) as client:
        if every:
            decisions = list(client.iter_decisions(filters, order=order, limit=limit))
            next_cursor = None
        else:
            page = client.list_decisions(filters, order=order, limit=limit, cursor=cursor)
            decisions, next_cursor = page.decisions, page.next_cursor
    if connection.as_json:
        wire = [d.model_dump(by_alias=True) for d in decisions]
        out.print_json(json.dumps({"decisions": wire, "nextCursor": next_cursor}))
        return
    out.print(summaries_table(decisions, f"{len(decisions)} decision(s)"))
    if next_cursor:
        out.print(f"next page: --cursor {next_cursor}")


@shared_options()
def calibration(
    filters: dict[str, Any] | None = None,
    bins: Annotated[
        int | None, typer.Option(metavar="2..20", help="Equal-width bins over [0, 1] (default 5).")
    ] = None,
    tenant: TenantOrEvery = None,
    *,
    connection: Connection,
) -> None:
    """How well confidence matched outcomes (cstp.getCalibration)."""
    with _client(connection, tenant) as client:
        result = client.get_calibration(filters, bins=bins)
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(to_wire(result)))
        return
    brier = "n/a" if result.brier_score is None else f"{result.brier_score:.4f}"
    table = Table(title=f"{result.decisions} scored decision(s), Brier score {brier}")
    for name in ("confidence", "count", "mean confidence", "success rate"):
        table.add_column(name, justify="right")
    for b in result.bins:
        table.add_row(
            f"{b.from_:.2f}-{b.to:.2f}",
            str(b.count),
            _fraction(b.mean_confidence),
            _fraction(b.success_rate),
        )
    out.print(table)
    for c in result.by_category:
        out.print(f"{c.category or '(none)'}: {c.decisions} decision(s), Brier {c.brier_score:.4f}")


def _fraction(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def summaries_table(decisions: list[DecisionMetadata], title: str) -> Table:
    """One row per decision: id, title, category, stakes, status, outcome, date, writer."""
    table = Table(title=title, title_justify="left")
    columns = ("id", "title", "category", "stakes", "status", "outcome", "date", "recorded by")
    for name in columns:
        table.add_column(name, overflow="fold")
    for d in decisions:
        table.add_row(
            d.id,
            d.title or "",
            d.category or "",
            d.stakes or "",
            d.status or "",
            d.outcome or "",
            (d.date or "")[:10],
            d.recorded_by or "",
        )
    return table


#: The commands by name, for the `cstp` app (a2a.cli.main) to register.
COMMANDS: dict[str, Callable[..., None]] = {
    "record": record,
    "review": review,
    "get": get,
    "list": list_command,
    "calibration": calibration,
}
