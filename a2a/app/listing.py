"""The listing of the tenants in Chroma (collection name -> change marker) behind listTenants
and `tenant: "*"`, and whether Chroma is known down (issue 44 item 2).

A listing is one Chroma call, made within the call's deadline (CONTRACT.md, Deadlines).
Once one fails, Chroma is known down: calls that may answer stale skip the listing and
answer stale at once (docs/availability.md), as one tenant's reads do while its index's
check is under way, and each such call starts, when none is under way, one listing in the
background (outside any call's deadline: the whole Chroma timeout) that no call waits for.
The first listing that succeeds, a call's or the background's, ends the outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable

from a2a.errors import StoreUnavailable

log = logging.getLogger(__name__)

#: Chroma's collections: name -> change marker (None: not read; ChromaDecisionStore).
Markers = dict[str, str | None]


class TenantListing:
    """`await listing()`: what `list_markers()` gives (StoreUnavailable when Chroma fails or
    does not answer by the call's deadline), remembering whether it failed (`down`).
    `probe()`: while down, one listing in the background."""

    def __init__(self, list_markers: Callable[[], Awaitable[Markers]]) -> None:
        self._list = list_markers
        self._down = False
        self._probe: asyncio.Task[None] | None = None

    @property
    def down(self) -> bool:
        """True from a failed listing until one succeeds."""
        return self._down

    async def __call__(self) -> Markers:
        try:
            markers = await self._list()
        except StoreUnavailable as exc:
            self._failed(exc)
            raise
        self._succeeded()
        return markers

    def probe(self) -> None:
        """While down and no probe is under way, list in the background, in a context of
        its own (no call's deadline or stale mark): its outcome only ends or continues the
        outage. Call from the event loop."""
        if not self._down or (self._probe is not None and not self._probe.done()):
            return
        self._probe = asyncio.get_running_loop().create_task(
            self._probed(), context=contextvars.Context()
        )

    async def _probed(self) -> None:
        # Still down: the next call that skips the listing probes again.
        with contextlib.suppress(StoreUnavailable):
            await self()

    def _failed(self, error: StoreUnavailable) -> None:
        if not self._down:
            log.warning("Chroma's tenant listing failed (%s); org-level reads answer stale", error)
        self._down = True

    def _succeeded(self) -> None:
        if self._down:
            log.warning("Chroma's tenant listing answers again")
        self._down = False

    async def stop(self) -> None:
        """Cancel a probe under way (the app's shutdown; its Chroma call's thread ends on
        its own)."""
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)
