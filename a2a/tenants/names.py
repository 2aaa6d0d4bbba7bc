"""Tenant names and the Chroma collection of each (CONTRACT.md, Tenants).

The store as it was before tenants is tenant `default`, kept in the configured collection
(CSTP_COLLECTION) as it is on disk. Every other tenant `<name>` lives in the collection
`t.<name>.<collection>`: Chroma names are 3-512 characters of `[a-zA-Z0-9._-]` that start
and end with a letter or digit, which a tenant name ending in `-` alone would not.
"""

from __future__ import annotations

import re
from typing import Final

#: A tenant name (CONTRACT.md, Tenants).
TENANT_NAME: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
#: The tenant of the store as it was before tenants, and of tokens that name none.
DEFAULT_TENANT: Final = "default"
#: `tenant: "*"`: every granted tenant that exists (org-level search).
EVERY_TENANT: Final = "*"
_PREFIX: Final = "t."


def is_tenant_name(value: object) -> bool:
    """True when `value` is a str matching TENANT_NAME."""
    return isinstance(value, str) and TENANT_NAME.fullmatch(value) is not None


def collection_of(base: str, tenant: str) -> str:
    """The Chroma collection of `tenant` when the configured collection is `base`."""
    return base if tenant == DEFAULT_TENANT else f"{_PREFIX}{tenant}.{base}"


def tenant_of(base: str, collection: str) -> str | None:
    """The tenant whose collection is `collection`, or None when it is no tenant's."""
    if collection == base:
        return DEFAULT_TENANT
    if not collection.startswith(_PREFIX) or not collection.endswith(f".{base}"):
        return None
    name = collection[len(_PREFIX) : -len(base) - 1]
    return name if is_tenant_name(name) and name != DEFAULT_TENANT else None
