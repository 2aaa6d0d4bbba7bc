"""`cstp query`: one cstp.queryDecisions call from the shell, with every filter and mode."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from a2a.cli import exit_codes, options
from a2a.client import FindSimilarDecisionsResult, QueryDecisionsResult, precedents
from a2a.client.clients import CSTPClient
from a2a.client.errors import CSTPError, InvalidParamsError, TransportError, UnauthorizedError
from a2a.client.peers import missing_peers, peers_summary
from a2a.client.table import decisions_table
from a2a.errors import SettingsError
from a2a.rpc.protocol import to_wire

if TYPE_CHECKING:  # the settings load only without --url (a2a.cli.main does the same)
    from a2a.settings import Settings

#: Bound to every interface: a client on this machine reaches it on loopback.
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


class Mode(StrEnum):
    """Retrieval modes of cstp.queryDecisions (CONTRACT.md, `retrievalMode`)."""

    semantic = "semantic"
    keyword = "keyword"
    hybrid = "hybrid"


def default_url(settings: Settings) -> str:
    """The address `cstp serve` binds with the same settings (CSTP_HOST, CSTP_PORT), as a
    base URL; a wildcard host (0.0.0.0, ::) means this machine's loopback.
    """
    host = _WILDCARDS.get(settings.host, settings.host)
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal in a URL (RFC 3986 section 3.2.2)
    return f"http://{host}:{settings.port}"


def _settings(err: Console) -> Settings:
    from a2a.settings import load_settings

    try:
        return load_settings()
    except SettingsError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(exit_codes.SETTINGS) from None


def query_params(query: str, filters: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """cstp.queryDecisions params by wire name; filters and options left unset are not sent
    (the service's defaults apply, and its -32602 names any bad value)."""
    params: dict[str, Any] = {"query": query}
    chosen = {k: v for k, v in filters.items() if v not in (None, [])}
    if chosen:
        params["filters"] = chosen
    params.update({k: v for k, v in extra.items() if v is not None})
    return params


def print_error(exc: CSTPError, err: Console, token: str | None) -> None:
    """`error CODE: message data` on `err`; for -32001, what to do about the token that
    was sent (`token`; None or empty when none was); for a -32602 naming `peers` or `peer`,
    the option and reason (peer_hints); for -32003 naming a peer, that the peer failed."""
    detail = f" {json.dumps(exc.data)}" if exc.data is not None else ""
    label = f"error {exc.code}" if exc.code else "error"  # 0: no JSON-RPC answer at all
    err.print(f"[red]{label}:[/red] {escape(exc.message + detail)}", markup=True)
    if isinstance(exc, UnauthorizedError):
        hint = (
            "the service needs a token: set CSTP_TOKEN or pass --token"
            if not token
            else "the service does not know this token (CSTP_TOKEN or --token)"
        )
        err.print(hint, markup=False)
    if isinstance(exc, InvalidParamsError):
        hints = peer_hints(exc)
        for line in hints or field_lines(exc):
            err.print(line, markup=False)
    if isinstance(exc, TransportError) and "ConnectError" in exc.message:  # nobody there
        err.print(
            "is `cstp serve` running there? set CSTP_URL (or --url) to its address",
            markup=False,
        )
    peer = exc.data.get("peer") if isinstance(exc.data, dict) else None
    if isinstance(peer, str):  # -32003 of getDecision with a peer: that peer, not our store
        err.print(
            f"the peer service {peer} did not answer usably; `cstp peers` shows its state",
            markup=False,
        )


def field_lines(exc: InvalidParamsError) -> list[str]:
    """One `field: reason` line per field a -32602 names, as the service named it."""
    return [f"{e.get('field', 'params')}: {e.get('reason', '')}" for e in exc.errors]


def peer_hints(exc: InvalidParamsError) -> list[str]:
    """For a -32602 naming `peers`, `peers[i]` or `peer`: one line per such field with the
    option it came from (`--peers: unknown peer 'x'`), then, for an unknown name, where to
    find the peers' names; [] when it names none of them."""
    named = [
        e for e in exc.errors if str(e.get("field", "")).partition("[")[0] in ("peers", "peer")
    ]
    lines = [f"--{e['field'].partition('[')[0]}: {e.get('reason', '')}" for e in named]
    if any(e["field"] != "peers" for e in named):  # a name it does not know
        lines.append("`cstp peers` lists the peer services this one can ask (CSTP_PEERS_FILE)")
    return lines


def print_peers(result: QueryDecisionsResult | FindSimilarDecisionsResult, out: Console) -> None:
    """Below a federated answer's table: how many peers answered and how the lists were
    merged, then one line per peer that failed or was skipped (its name, status, reason).
    Nothing for an answer without peers."""
    if result.peers is None:
        return
    out.print(peers_summary(result.peers, result.merge), markup=False)
    for line in missing_peers(result.peers):
        out.print(line, markup=False)


def run_query(
    url: str,
    token: str | None,
    params: dict[str, Any],
    *,
    as_json: bool,
    out: Console,
    err: Console,
) -> int:
    """Call the service and print; returns the exit code (exit_codes.OK, FAILED, UNREACHABLE)."""
    try:
        with CSTPClient(url, token) as client:
            wire = client.call("cstp.queryDecisions", params)
        result = QueryDecisionsResult.model_validate(wire)
    except TransportError as exc:
        print_error(exc, err, token)
        return exit_codes.UNREACHABLE
    except CSTPError as exc:
        print_error(exc, err, token)
        return exit_codes.FAILED
    if as_json:
        out.print_json(json.dumps(to_wire(result)))
        return exit_codes.OK
    # Above the table, as the precedents block says it (seed 001, "No false confidence"),
    # from the result as the service judged it (`broadMatch`, the console reads the same).
    # The service's own note (a category no stored decision has, with the known ones) says
    # why the list is empty better than "no relevant precedents".
    if note := precedents.result_note(result):
        out.print(note, markup=False)
    asked = "peers" in params
    out.print(decisions_table(result, tenants=params.get("tenant") == "*", peers=asked))
    print_peers(result, out)
    return exit_codes.OK


@options.shared_options()
def query(
    text: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for, in words.")],
    filters: dict[str, Any] | None = None,
    mode: Annotated[
        Mode | None,
        typer.Option(
            metavar="MODE",
            help="semantic, keyword or hybrid (default: the service's setting).",
        ),
    ] = None,
    max_distance: Annotated[
        float | None,
        typer.Option(metavar="0..2", help="Leave out results farther than this cosine distance."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(metavar="1..50", help="Most decisions returned (default 10).")
    ] = None,
    reasons: Annotated[
        bool,
        typer.Option("--reasons", help="Ask for each decision's reason types; shown as a column."),
    ] = False,
    tenant: options.TenantOrEvery = None,
    peers: options.PeerList = None,
    after: options.OldAfter = None,
    before: options.OldBefore = None,
    *,
    connection: options.Connection,
) -> None:
    """Ask a running service for decisions (cstp.queryDecisions) and print them.

    With --peers, its peer services are asked too: one list with a peer column, then a line
    per peer that failed or was skipped (the answer is still given: exit 0)."""
    params = query_params(
        text,
        options.old_dates(filters, after, before),
        limit=limit,
        includeReasons=True if reasons else None,
        retrievalMode=None if mode is None else str(mode),
        maxDistance=max_distance,
        tenant=tenant,
        peers=peers,
    )
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    base = connection.url or default_url(_settings(err))
    # Piped output gets a wide page, so ids and titles are never wrapped mid-word.
    as_json = connection.as_json
    out = Console(highlight=False, soft_wrap=as_json, width=None if sys.stdout.isatty() else 200)
    code = run_query(base, connection.token, params, as_json=as_json, out=out, err=err)
    raise typer.Exit(code)
