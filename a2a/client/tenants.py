"""The client's side of tenants (CONTRACT.md, Tenants): `tenant` on each call's params, and
the cstp.listTenants result.

Every method but cstp.listTenants and cstp.listPeers takes an optional top-level `tenant`: a
tenant name, or `"*"` (every granted tenant) on queryDecisions, findSimilarDecisions and
getCalibration. The service checks it (-32602 `tenant` for a bad name or a misplaced `"*"`,
-32004 with `requiredTenant` for one the token is not granted); the client only passes it
along.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel

#: The method listing the tenants, which takes no `tenant`.
LIST_TENANTS: Final = "cstp.listTenants"
#: The methods that take no `tenant` (cstp.listPeers: a2a.client.peers.LIST_PEERS).
NO_TENANT: Final = frozenset({LIST_TENANTS, "cstp.listPeers"})


def with_tenant(
    method: str, params: dict[str, Any] | None, tenant: str | None
) -> dict[str, Any] | None:
    """`params` with `tenant` added: unless `tenant` is None, the method takes none
    (listTenants, listPeers), or the params already name one (a call's own `tenant` wins
    over the client's)."""
    if tenant is None or method in NO_TENANT or (params is not None and "tenant" in params):
        return params
    return {**(params or {}), "tenant": tenant}


class TenantCount(BaseModel):
    """One tenant: its name and how many decisions it holds."""

    name: str
    decisions: int


class ListTenantsResult(BaseModel):
    """cstp.listTenants: the granted tenants that exist, sorted by name (auth off: all)."""

    tenants: list[TenantCount]
