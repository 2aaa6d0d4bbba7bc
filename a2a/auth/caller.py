"""Who is calling: the one place a request's agent id and scopes are derived.

With auth on, the agent and scopes come from the bearer token. With auth off, every call is
allowed and the agent is the client address: the socket peer, or the address a trusted proxy
put in `X-Forwarded-For` (CONTRACT.md section Rate limiting).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.types import Scope as AsgiScope

from a2a.auth.scopes import READ_ONLY, SCOPES, Scopes
from a2a.settings import Network, parse_networks
from a2a.tenants.grants import DEFAULT_ONLY, OPEN, Grant

#: `scope["state"]` key of the Caller (Starlette's `request.state.caller`).
CALLER_KEY = "caller"


@dataclass(frozen=True, slots=True)
class Caller:
    """The calling agent id, the scopes its token grants and the tenants it may use (all
    of them with auth off)."""

    agent: str
    scopes: Scopes
    tenants: Grant = DEFAULT_ONLY


#: The caller of a request nobody identified (never reached with the middleware installed).
UNKNOWN = Caller("unknown", READ_ONLY)


class TrustedProxies:
    """The proxies whose `X-Forwarded-For` is believed (CSTP_TRUSTED_PROXIES; default none)."""

    def __init__(self, networks: Iterable[str] = ()) -> None:
        """`networks`: addresses or CIDR blocks. Raises ValueError naming a bad one."""
        self._networks: list[Network] = parse_networks(networks)

    def __contains__(self, address: str) -> bool:
        if not self._networks:
            return False  # the default: no proxy is trusted, nothing to parse
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._networks)

    def client_address(self, scope: AsgiScope) -> str:
        """The client's address: the socket peer, unless the peer is a trusted proxy.

        Behind trusted proxies, the right-most `X-Forwarded-For` address that is not itself
        a trusted proxy (the left-most ones are the client's to forge).
        """
        peer = scope["client"][0] if scope.get("client") else "unknown"
        if peer not in self:
            return peer
        forwarded = [
            part.strip()
            for name, value in scope["headers"]
            if name.lower() == b"x-forwarded-for"
            for part in value.decode("latin-1").split(",")
        ]
        for address in reversed(forwarded):
            if address not in self:
                return address if _is_ip(address) else peer
        return peer


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def anonymous(scope: AsgiScope, proxies: TrustedProxies) -> Caller:
    """The caller with auth off: its client address, every scope and tenant (development
    mode)."""
    return Caller(proxies.client_address(scope), SCOPES, OPEN)


def caller_of(scope: AsgiScope) -> Caller:
    """The Caller `a2a.http.identify.Identify` found for this request."""
    caller = scope.get("state", {}).get(CALLER_KEY)
    return caller if isinstance(caller, Caller) else UNKNOWN
