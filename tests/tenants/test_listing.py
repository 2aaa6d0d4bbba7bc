"""The tenant listing remembers a failure, and while down a probe in the background (no
call's deadline, no call waiting for it) ends the outage (a2a.app.listing)."""

from __future__ import annotations

import asyncio

import pytest

from a2a.app.listing import Markers, TenantListing
from a2a.errors import StoreUnavailable
from a2a.store.deadlines import call_deadline, seconds_left


async def test_a_failed_listing_is_remembered_and_a_probe_ends_the_outage() -> None:
    answers: list[Markers | None] = [None, None, {"cstp_decisions_acme": "7"}]
    lefts: list[float] = []  # what each listing had of its deadline (5 s)

    async def listed() -> Markers:
        lefts.append(seconds_left(5.0))
        answer = answers.pop(0)
        if answer is None:
            raise StoreUnavailable("Chroma did not answer within 2 s")
        return answer

    listing = TenantListing(listed)
    listing.probe()  # not down: nothing to try
    assert not listing.down and not lefts
    with call_deadline(), pytest.raises(StoreUnavailable):
        await listing()
    assert listing.down
    with call_deadline():
        seconds_left(0.0)  # the call's deadline: passed
        listing.probe()
        listing.probe()  # one under way: not a second
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert listing.down and len(lefts) == 2
    assert lefts[1] == 5.0  # the probe: outside the call's deadline
    listing.probe()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not listing.down
    await listing.stop()
