"""The options every `cstp` client command shares: one name, metavar and help per filter.

A filter has the same option in every command that takes it (`--date-after`, never `--after`
in one and `--date-after` in another); names a command used before stay as hidden aliases
(`OldAfter`, `OldBefore`), so scripts keep working. Every option has a readable metavar
(`DATE`, `0..1`), never click's `TEXT` or `FLOAT`.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

import typer

from a2a.tenants.names import EVERY_TENANT, is_tenant_name


class StakesValue(StrEnum):
    """Stakes values a filter may name (CONTRACT.md, filters.stakes)."""

    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"


class StatusValue(StrEnum):
    """Status values a filter may name (CONTRACT.md, filters.status)."""

    proposed = "proposed"
    pending = "pending"
    decided = "decided"
    reviewed = "reviewed"
    superseded = "superseded"
    deprecated = "deprecated"
    rejected = "rejected"


Url = Annotated[
    str | None,
    typer.Option(
        envvar="CSTP_URL",
        metavar="URL",
        help="The service's base URL; default http://CSTP_HOST:CSTP_PORT as `serve` binds.",
        show_default=False,
    ),
]
Token = Annotated[
    str | None,
    typer.Option(envvar="CSTP_TOKEN", metavar="TOKEN", help="Bearer token of the calling agent."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the JSON result as sent.")]


def tenant_name(value: str | None) -> str | None:
    """`--tenant`'s check: a tenant name (CONTRACT.md, Tenants), else exit 2 naming it."""
    if value is not None and not is_tenant_name(value):
        raise typer.BadParameter(f"{value[:64]!r} is not a tenant name: [a-z0-9][a-z0-9-]{{0,62}}")
    return value


def tenant_or_every(value: str | None) -> str | None:
    """`--tenant`'s check where `*` (every granted tenant) is taken too."""
    return value if value == EVERY_TENANT else tenant_name(value)


_TENANT_HELP = "The tenant to use (default: the token's only one; `default` with auth off)."
Tenant = Annotated[
    str | None,
    typer.Option("--tenant", metavar="NAME", callback=tenant_name, help=_TENANT_HELP),
]
#: `--tenant` of the commands whose method takes "*" (query, similar, calibration).
TenantOrEvery = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        metavar="NAME|*",
        callback=tenant_or_every,
        help=f"{_TENANT_HELP} `*`: every tenant the token is granted, as one list.",
    ),
]


def peer_names(value: str | None) -> list[str] | str | None:
    """`--peers`' parse: `*` as is (every configured peer), else comma-separated names as a
    list (`b,c` -> ["b", "c"]); exit 2 when no name is left. The service checks the names
    (-32602 naming an unknown one)."""
    if value is None or value.strip() == "*":
        return None if value is None else "*"
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise typer.BadParameter("name at least one peer (b,c), or `*` for every one")
    return names


#: `--peers` of the search commands (query, similar): CONTRACT.md, Federation.
PeerList = Annotated[
    str | None,
    typer.Option(
        "--peers",
        metavar="NAME,NAME|*",
        callback=peer_names,
        help="Also ask these peer services (`cstp peers` lists them; `*`: every one), as one"
        " list with a peer column; a peer that fails is left out and named below the table.",
    ),
]
#: `--peer` of `cstp get`: the decision is a peer service's.
PeerName = Annotated[
    str | None,
    typer.Option(
        "--peer",
        metavar="NAME",
        help="Read the decision from this peer service (the peer column of `query --peers`).",
    ),
]
Category = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="Only this category (exact match, case included; a miss names the known ones).",
    ),
]
# Free text, checked by the service (its -32602 names filters.status): what `cstp query`
# has always done, and a status added to the wire needs no new CLI.
Status = Annotated[
    list[str] | None,
    typer.Option(
        metavar="STATUS",
        help="Only this status (proposed, pending, decided, reviewed, superseded, deprecated,"
        " rejected); repeatable.",
    ),
]
Stakes = Annotated[
    list[StakesValue] | None,
    typer.Option(
        metavar="STAKES", help="Only this stakes (low, medium, high, critical); repeatable."
    ),
]
MinConfidence = Annotated[
    float | None, typer.Option(metavar="0..1", help="Only decisions at least this confident.")
]
MaxConfidence = Annotated[
    float | None, typer.Option(metavar="0..1", help="Only decisions at most this confident.")
]
DateAfter = Annotated[
    str | None,
    typer.Option(
        metavar="DATE",
        help="Only decisions on or after DATE (YYYY-MM-DD, or RFC 3339 with an offset).",
    ),
]
DateBefore = Annotated[
    str | None,
    typer.Option(metavar="DATE", help="Only decisions on or before DATE (as --date-after)."),
]
#: `cstp query`'s names before the filters were named alike: hidden, still accepted.
OldAfter = Annotated[str | None, typer.Option("--after", metavar="DATE", hidden=True)]
OldBefore = Annotated[str | None, typer.Option("--before", metavar="DATE", hidden=True)]


def filters(
    *,
    category: str | None = None,
    status: list[str] | None = None,
    stakes: list[StakesValue] | None = None,
    min_confidence: float | None = None,
    max_confidence: float | None = None,
    date_after: str | None = None,
    date_before: str | None = None,
) -> dict[str, Any] | None:
    """The wire's `filters` object (CONTRACT.md) of the options given, or None when none is:
    options left unset are not sent, so the service's defaults apply."""
    wire = {
        "category": category,
        "status": [str(s) for s in status or []],
        "stakes": [str(s) for s in stakes or []],
        "minConfidence": min_confidence,
        "maxConfidence": max_confidence,
        "dateAfter": date_after,
        "dateBefore": date_before,
    }
    chosen = {k: v for k, v in wire.items() if v not in (None, [])}
    return chosen or None


#: The filter options by parameter name, in the order a help page lists them.
FILTER_OPTIONS: dict[str, Any] = {
    "category": Category,
    "status": Status,
    "stakes": Stakes,
    "min_confidence": MinConfidence,
    "max_confidence": MaxConfidence,
    "date_after": DateAfter,
    "date_before": DateBefore,
}

#: --url, --token and --json, which every client command takes, with their defaults.
CONNECTION_OPTIONS: dict[str, tuple[Any, Any]] = {
    "url": (Url, None),
    "token": (Token, None),
    "as_json": (AsJson, False),
}


@dataclass(frozen=True)
class Connection:
    """A client command's --url (None: the address `cstp serve` binds), --token and --json."""

    url: str | None
    token: str | None
    as_json: bool


Command = Callable[..., None]


def shared_options(*filter_names: str) -> Callable[[Command], Command]:
    """Give a command the options declared once here, for the parameters that stand for them:

    - `filters`: the filter options `filter_names` (all of FILTER_OPTIONS when none is named);
      the command gets the wire's filters object of them (`filters`; None when none is given);
    - `connection`: --url, --token and --json (CONNECTION_OPTIONS); the command gets a
      `Connection`.

    The options stand where the parameter does, so a help page lists them in that place.
    """
    chosen = filter_names or tuple(FILTER_OPTIONS)

    def decorate(command: Command) -> Command:
        hints = typing.get_type_hints(command, include_extras=True)
        params: list[inspect.Parameter] = []
        for param in inspect.signature(command).parameters.values():
            if param.name == "filters":
                params += [
                    inspect.Parameter(
                        name, param.kind, default=None, annotation=FILTER_OPTIONS[name]
                    )
                    for name in chosen
                ]
            elif param.name == "connection":
                params += [
                    inspect.Parameter(name, param.kind, default=default, annotation=annotation)
                    for name, (annotation, default) in CONNECTION_OPTIONS.items()
                ]
            else:
                params.append(param.replace(annotation=hints[param.name]))
        declared = inspect.signature(command).parameters

        @functools.wraps(command)
        def run(**given: Any) -> None:
            if "filters" in declared:
                given["filters"] = filters(**{name: given.pop(name) for name in chosen})
            if "connection" in declared:
                given["connection"] = Connection(
                    **{name: given.pop(name) for name in CONNECTION_OPTIONS}
                )
            command(**given)

        # typer reads the options from the signature and its annotations.
        run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate


def old_dates(
    filters: dict[str, Any] | None, after: str | None, before: str | None
) -> dict[str, Any]:
    """`filters` with the dates given by their hidden old names (`OldAfter`, `OldBefore`).

    Raises typer.BadParameter (exit 2) when a date is given by both names, differently.
    """
    wire = dict(filters or {})
    for key, old, name in (
        ("dateAfter", after, "--date-after"),
        ("dateBefore", before, "--date-before"),
    ):
        value = either(wire.get(key), old, name)
        if value is not None:
            wire[key] = value
    return wire


def either(new: str | None, old: str | None, name: str) -> str | None:
    """The value of option `name` given by its name or its hidden old alias.

    Raises typer.BadParameter (exit 2) when both are given with different values.
    """
    if new is not None and old is not None and new != old:
        raise typer.BadParameter(
            f"given twice with different values ({new!r}, {old!r})", param_hint=name
        )
    return new if new is not None else old
