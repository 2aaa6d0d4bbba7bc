"""Help pages of the `cstp` command as plain text, without typer's Python type column.

typer renders each parameter's Python annotation (`<list[Path]>`, `--json <bool>`) next to
it; a user needs the metavar (`PATH`, `URL`) and the help. With `rich_markup_mode=None` on the
app, options already print as click does (`--port PORT`, flags bare); this command class
does the same for arguments and for the usage line.
"""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.core import TyperCommand

#: typer's label of an option's Python type, after the option's name: ` <int>`, ` <list[str]>`.
_TYPE_LABEL = re.compile(r" <([^<>]+)>")
#: Python type names as click's metavars.
_METAVARS = {"int": "INTEGER", "float": "FLOAT", "str": "TEXT", "path": "PATH", "bool": ""}


def _click_metavar(match: re.Match[str]) -> str:
    name = match.group(1).removeprefix("list[").removesuffix("]").removesuffix(" range")
    if "|" in name:  # choices
        return f" [{name}]"
    metavar = _METAVARS.get(name.lower(), name.upper())
    return f" {metavar}" if metavar else ""


def _metavar(param: Any) -> str:
    name = str(param.metavar or (param.name or "").upper())
    return f"{name}..." if param.nargs == -1 else name


class PlainHelpCommand(TyperCommand):
    """A typer command whose help lists arguments by metavar, never by Python type."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """`[OPTIONS] PATH...`: the options marker, then each argument's metavar."""
        pieces = ["[OPTIONS]"] if any(p.param_type_name == "option" for p in self.params) else []
        return pieces + [_metavar(p) for p in self.params if p.param_type_name == "argument"]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """The Arguments and Options sections, as click writes them."""
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((_metavar(param), record[1]))
            else:
                # An option declared without a metavar: click's name for its type instead.
                options.append((_TYPE_LABEL.sub(_click_metavar, record[0]), record[1]))
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def summary(doc: str | None) -> str:
    """A one-line description for `cstp --help`: the docstring's first line, cut before a
    parenthesis or a semicolon so that the command list never truncates it."""
    first = (doc or "").strip().split("\n", 1)[0]
    return re.split(r" \(|; ", first)[0].rstrip(".") + "." if first else ""


def use_plain_help(app: typer.Typer) -> None:
    """Make PlainHelpCommand the class of every command registered on `app` with the default,
    and give each a short description (`summary`) unless it has one.

    Call after every command is registered, before the app runs.
    """
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):  # typer's default class
            command.cls = PlainHelpCommand
        if command.short_help is None and command.callback is not None:
            command.short_help = summary(command.callback.__doc__)
