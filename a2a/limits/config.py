"""The rate-limit policy of the settings (their limit strings are checked in a2a.settings)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from limits import RateLimitItem

from a2a.settings import ANY_METHOD, parse_limit


def describe_storage(uri: str) -> str:
    """The URI without credentials, for logs: `redis://host:6379`."""
    parts = urlsplit(uri)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path if parts.scheme == 'redis+unix' else ''}"


@dataclass(frozen=True, slots=True)
class LimitPolicy:
    """Which limits a call of a method is checked against: the overall ones, then its own."""

    overall: list[RateLimitItem] = field(default_factory=list)
    per_method: dict[str, list[RateLimitItem]] = field(default_factory=dict)

    @classmethod
    def from_strings(
        cls, default: str | None, methods: dict[str, str], served: Iterable[str]
    ) -> LimitPolicy:
        """The policy of CSTP_RATE_LIMIT_DEFAULT and CSTP_RATE_LIMITS.

        Raises ValueError naming CSTP_RATE_LIMITS when it names a method that is not served
        (a typo must not silently leave a method unlimited), or a bad limit string.
        """
        unknown = sorted(set(methods) - set(served))
        if unknown:
            raise ValueError(f"CSTP_RATE_LIMITS: no such method {', '.join(unknown)}")
        return cls(
            overall=parse_limit(default) if default else [],
            per_method={method: parse_limit(limit) for method, limit in methods.items()},
        )

    def checks(self, method: str) -> list[tuple[str, RateLimitItem]]:
        """`(scope, limit)` pairs for one call: scope `*` for overall limits, else the method."""
        return [(ANY_METHOD, item) for item in self.overall] + [
            (method, item) for item in self.per_method.get(method, [])
        ]

    def __bool__(self) -> bool:
        return bool(self.overall or self.per_method)
