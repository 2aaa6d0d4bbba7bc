"""Which tenants a token may use: the fourth part of a token entry (CONTRACT.md, Tenants)."""

from __future__ import annotations

from dataclasses import dataclass

from a2a.tenants.names import DEFAULT_TENANT, EVERY_TENANT, is_tenant_name


@dataclass(frozen=True, slots=True)
class Grant:
    """Named tenants, or every tenant (`every`). The default grant is tenant `default`.

    `open`: auth is off; a call that names no tenant then uses `default`.
    """

    names: frozenset[str] = frozenset({DEFAULT_TENANT})
    every: bool = False
    open: bool = False

    def allows(self, tenant: str) -> bool:
        """True when calls may name `tenant`."""
        return self.every or tenant in self.names

    @property
    def single(self) -> str | None:
        """The one tenant a call that names none uses, or None when there are several."""
        if self.open:
            return DEFAULT_TENANT
        if self.every or len(self.names) != 1:
            return None
        return next(iter(self.names))

    @classmethod
    def parse(cls, text: str) -> Grant:
        """`acme|globex`, `*`, or "" (tenant `default`). Raises ValueError naming a bad name."""
        text = text.strip()
        if not text:
            return cls()
        if text == EVERY_TENANT:
            return EVERY
        names = [name.strip() for name in text.split("|")]
        if EVERY_TENANT in names:
            raise ValueError("'*' (every tenant) stands alone, not joined with names by '|'")
        for name in names:
            if not is_tenant_name(name):
                raise ValueError(
                    f"tenant {name[:64]!r} must match [a-z0-9][a-z0-9-]{{0,62}} (or be '*')"
                )
        return cls(frozenset(names))


#: Tenant `default` only: tokens that name no tenants.
DEFAULT_ONLY = Grant()
#: Every tenant: tokens with `*`.
EVERY = Grant(frozenset(), every=True)
#: Every tenant, `default` when a call names none: every call with auth off.
OPEN = Grant(frozenset(), every=True, open=True)
