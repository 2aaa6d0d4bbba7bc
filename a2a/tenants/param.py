"""The `tenant` param every method but cstp.listTenants takes (CONTRACT.md, Tenants).

Checked after the scope step and before the method's own params, in the contract's order:
omitted -> the grant's one tenant (-32602 when it has several); not a valid name -> -32602;
not granted -> -32004, whether or not the tenant exists; `"*"` on a method that does not
take it -> -32602.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from a2a.errors import FieldError, InvalidParams, TenantNotGranted
from a2a.tenants.grants import Grant
from a2a.tenants.names import EVERY_TENANT, is_tenant_name

#: How a method takes `tenant`: one tenant, one or `"*"` (every granted tenant), or none.
Tenancy = Literal["one", "many", "none"]
#: The params key.
KEY: Final = "tenant"
#: The methods that take `"*"` (CONTRACT.md, Tenants).
ORG_METHODS: Final = "cstp.queryDecisions, cstp.findSimilarDecisions and cstp.getCalibration"


def take_tenant(
    params: dict[str, Any] | list[Any] | None, tenancy: Tenancy, grant: Grant
) -> tuple[str, dict[str, Any] | list[Any] | None]:
    """(the tenant the call names, or "*"; the params without `tenant`).

    Raises InvalidParams on `tenant` and TenantNotGranted as the module says. A method of
    tenancy "none" gets its params unchanged (a `tenant` key is then an unknown parameter).
    """
    if tenancy == "none":
        return "", params
    if not isinstance(params, dict) or KEY not in params:
        single = grant.single
        if single is None:
            raise _invalid("this token grants several tenants: name one")
        return single, params
    rest = {key: value for key, value in params.items() if key != KEY}
    tenant = params[KEY]
    if tenant == EVERY_TENANT:
        if tenancy != "many":
            raise _invalid(f'"*" (every granted tenant) is taken by {ORG_METHODS} only')
        return tenant, rest
    if not is_tenant_name(tenant):
        raise _invalid('must be a tenant name matching [a-z0-9][a-z0-9-]{0,62}, or "*"')
    if not grant.allows(tenant):
        raise TenantNotGranted(tenant)
    return tenant, rest


def _invalid(reason: str) -> InvalidParams:
    return InvalidParams([FieldError(KEY, reason)])
