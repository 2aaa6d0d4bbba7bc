"""`cstp tenants`: the tenants the token may use, from cstp.listTenants (CONTRACT.md, Tenants)."""

from __future__ import annotations

import json

from rich.table import Table

from a2a.cli.decisions import _client, _out
from a2a.cli.options import Connection, shared_options
from a2a.client.tenants import ListTenantsResult


@shared_options()
def tenants(*, connection: Connection) -> None:
    """List the tenants this token may use that hold decisions, with their counts
    (cstp.listTenants; with auth off, every tenant). Name one with --tenant on the other
    commands."""
    with _client(connection) as client:
        result = client.list_tenants()
    out = _out(connection.as_json)
    if connection.as_json:
        out.print_json(json.dumps(result.model_dump()))
        return
    out.print(tenants_table(result))


def tenants_table(result: ListTenantsResult) -> Table:
    """One row per tenant, by name: its name and how many decisions it holds."""
    table = Table(title=f"{len(result.tenants)} tenant(s)", title_justify="left")
    table.add_column("tenant", overflow="fold")
    table.add_column("decisions", justify="right")
    for tenant in result.tenants:
        table.add_row(tenant.name, str(tenant.decisions))
    return table
