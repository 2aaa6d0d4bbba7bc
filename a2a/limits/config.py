"""Reading limit settings: limit strings, the method -> limit map, the storage URI."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from limits import RateLimitItem, parse_many

#: Storage schemes served (sync `limits` storages, run in worker threads). `memory://` keeps
#: limits per process; the Redis ones share them between processes.
STORAGE_SCHEMES = ("memory", "redis", "rediss", "redis+unix")
#: The scope of the overall per-agent limit, which no JSON-RPC method name can take.
ANY_METHOD = "*"


def parse_limit(text: str) -> list[RateLimitItem]:
    """`"120/minute"` or `"10/second;600/hour"` as limit items (limits' string notation).

    Raises ValueError, without library internals, when `text` is not such a string.
    """
    try:
        return parse_many(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a limit like '120/minute' or '10/second;600/hour'"
        ) from None


def check_limit(text: str | None) -> str | None:
    """Settings validator: a parseable limit string, or None (no limit)."""
    if text is not None:
        parse_limit(text)
    return text


def method_limits_before(value: Any) -> Any:
    """Settings pre-validator: `"m1=120/minute,m2=10/second"` (or JSON) as a dict.

    CSTP_RATE_LIMITS is written as comma-separated `method=limit` pairs; a JSON object and
    the YAML mapping of config/cstp.yaml are taken as they are. Raises ValueError for a pair
    without `=`.
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("{"):
        return json.loads(text)
    pairs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        method, sep, limit = (part.strip() for part in item.partition("="))
        if not sep or not method:
            raise ValueError(f"{item!r} is not method=limit (e.g. cstp.queryDecisions=120/minute)")
        pairs[method] = limit
    return pairs


def check_method_limits(value: dict[str, str]) -> dict[str, str]:
    """Settings validator: every value a limit string, no method named like a scope."""
    for method, limit in value.items():
        if method == ANY_METHOD or not method or any(c.isspace() for c in method):
            raise ValueError(f"{method!r} is not a method name")
        try:
            parse_limit(limit)
        except ValueError as exc:
            raise ValueError(f"{method}: {exc}") from None
    return value


def check_storage_uri(value: str) -> str:
    """Settings validator: a `memory://` or Redis URI (see STORAGE_SCHEMES)."""
    scheme = urlsplit(value).scheme
    if scheme not in STORAGE_SCHEMES or "://" not in value:
        raise ValueError(f"storage must be one of {', '.join(s + '://' for s in STORAGE_SCHEMES)}")
    return value


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
