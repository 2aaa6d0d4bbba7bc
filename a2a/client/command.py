"""`cstp query`: one cstp.queryDecisions call from the shell, printed as a table or JSON."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape

from a2a.client.clients import CSTPClient
from a2a.client.errors import CSTPError
from a2a.client.precedents import result_note
from a2a.client.table import decisions_table
from a2a.rpc.protocol import to_wire

#: Exit codes: 0 answered, 1 the service returned an error or could not be reached.
EXIT_OK, EXIT_ERROR = 0, 1


def run_query(
    query: str,
    *,
    url: str,
    token: str | None,
    category: str | None = None,
    status: list[str] | None = None,
    limit: int | None = None,
    as_json: bool = False,
    max_distance: float | None = None,
    out: Console,
    err: Console,
) -> int:
    """Ask the service at `url`; print the decisions on `out`, an error on `err`.

    Returns the exit code. With `as_json` the JSON-RPC result is printed as sent; else
    the table, under the "No false confidence" note when one applies (`result_note`).
    """
    filters: dict[str, Any] = {}
    if category:
        filters["category"] = category
    if status:
        filters["status"] = status
    try:
        with CSTPClient(url, token) as client:
            result = client.query_decisions(
                query, filters or None, limit, max_distance=max_distance
            )
    except CSTPError as exc:
        detail = f" {json.dumps(exc.data)}" if exc.data is not None else ""
        label = f"error {exc.code}" if exc.code else "error"  # 0: no JSON-RPC answer at all
        err.print(f"[red]{label}:[/red] {escape(exc.message + detail)}", markup=True)
        return EXIT_ERROR
    if as_json:
        out.print_json(json.dumps(to_wire(result)))
    else:
        if note := result_note(result):
            out.print(note, markup=False)
        out.print(decisions_table(result))
    return EXIT_OK
