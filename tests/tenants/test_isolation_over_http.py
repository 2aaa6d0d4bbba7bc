"""Tenants over real HTTP, on embedded Chroma and on `chroma run` (CONTRACT.md, Tenants):
the isolation table (every method x both doors x own, other, unknown and "*" tenant),
org-level search, listTenants, cursors, and the store made before tenants."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.decisions.lifecycle_wire import Served
from tests.decisions.wire import call, result
from tests.tenants.wire import (
    ACME,
    ACME_TOKEN,
    GLOBEX_TOKEN,
    LEGACY_TOKEN,
    ORG_TOKEN,
    ROOT_TOKEN,
    over_cstp,
    over_mcp,
    served,
)

pytestmark = pytest.mark.slow

ORG_METHODS = {"cstp.queryDecisions", "cstp.findSimilarDecisions", "cstp.getCalibration"}


@pytest.fixture(scope="module", params=["embedded", "chroma-server"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    with served(tmp_path_factory.mktemp(request.param), request.param) as s:
        for tenant, token, title in (
            ("acme", ACME_TOKEN, "Acme moves billing events to Kafka"),
            ("globex", GLOBEX_TOKEN, "Globex moves billing events to Kafka"),
        ):
            for suffix in ("", "-cstp", "-mcp"):
                decision = {
                    "id": f"shared{suffix}",
                    "title": title,
                    "category": "architecture",
                    "stakes": "high",
                    "confidence": 0.8,
                    "outcome": "success",
                    "tags": ["kafka", "billing"],
                }
                params = {"decision": decision, "tenant": tenant}
                assert result(s.url, "cstp.recordDecision", params, token)["created"] is True
            params = {"decision": {"id": f"{tenant}-only", "title": f"{title} (own)"}}
            assert result(s.url, "cstp.recordDecision", params, token)["created"] is True
        yield s


def calls(door: str) -> list[tuple[str, dict[str, Any]]]:
    """One call of every method a tenant's data answers, for `door`'s own ids."""
    mine = f"shared-{door}"
    return [
        ("cstp.queryDecisions", {"query": "billing events kafka"}),
        (
            "cstp.findSimilarDecisions",
            {"proposal": {"tags": ["kafka"], "category": "architecture"}},
        ),
        ("cstp.getDecision", {"id": "shared"}),
        ("cstp.listDecisions", {}),
        ("cstp.getCalibration", {}),
        ("cstp.getStats", {}),
        ("cstp.checkDrift", {}),
        (
            "cstp.checkGuardrails",
            {
                "proposal": {
                    "title": "Kafka for billing",
                    "tags": ["kafka"],
                    "category": "architecture",
                }
            },
        ),
        ("cstp.searchDocs", {"query": "rate limits"}),
        *([("rpc.discover", {})] if door == "cstp" else []),  # not an MCP tool
        ("cstp.recordDecision", {"decision": {"id": f"new-{door}", "title": "A new one"}}),
        ("cstp.reviewDecision", {"id": mine, "outcome": "failure"}),
        ("cstp.updateDecision", {"id": mine, "changes": {"confidence": 0.3}, "reason": "r"}),
        ("cstp.deleteDecision", {"id": mine, "reason": "a test"}),
    ]


def with_tenant(params: dict[str, Any], tenant: str | None) -> dict[str, Any]:
    return params if tenant is None else {**params, "tenant": tenant}


def run(server: Served, door: str, tenant: str | None) -> list[dict[str, Any]]:
    """The outcome of each of `calls(door)` made by acme's token naming `tenant`."""
    table = [(method, with_tenant(params, tenant)) for method, params in calls(door)]
    if door == "mcp":
        return asyncio.run(over_mcp(server.url, ACME_TOKEN, table))
    return [over_cstp(server.url, ACME_TOKEN, method, params) for method, params in table]


def leaks(found: Any) -> bool:
    """True when anything of globex's shows in `found`."""
    text = json.dumps(found).lower()
    return "globex" in text


@pytest.mark.parametrize("door", ["cstp", "mcp"])
def test_the_isolation_table(server: Served, door: str) -> None:
    # Other and unknown first: they must change nothing, so own then sees the seeded data.
    other, unknown, every = (run(server, door, t) for t in ("globex", "nowhere", "*"))
    own = run(server, door, None)
    for (method, _), o, u, e, mine in zip(calls(door), other, unknown, every, own, strict=True):
        # A tenant the token is not granted: -32004 whether or not it exists, alike.
        assert o == {"error": {"code": -32004, "data": {"requiredTenant": "globex"}}}, method
        assert u == {"error": {"code": -32004, "data": {"requiredTenant": "nowhere"}}}, method
        if method in ORG_METHODS:
            assert "result" in e, (method, e)
        else:
            assert e["error"]["code"] == -32602, method
            assert [f["field"] for f in e["error"]["data"]["errors"]] == ["tenant"], method
        assert "result" in mine, (method, mine)
        for found in (e, mine):
            assert not leaks(found), (method, found)
            decisions = found.get("result", {}).get("decisions")
            for decision in decisions if isinstance(decisions, list) else []:
                assert decision["tenant"] == "acme", (method, decision)
    named = dict(zip([m for m, _ in calls(door)], own, strict=True))
    assert [d["id"] for d in named["cstp.queryDecisions"]["result"]["decisions"]][:1] == ["shared"]
    assert named["cstp.getDecision"]["result"]["title"] == "Acme moves billing events to Kafka"
    assert named["cstp.getDecision"]["result"]["tenant"] == "acme"
    # Globex's copies of the ids acme changed are as they were.
    theirs = result(server.url, "cstp.getDecision", {"id": f"shared-{door}"}, GLOBEX_TOKEN)
    assert (theirs["outcome"], theirs["confidence"]) == ("success", 0.8)


def test_an_id_of_another_tenant_answers_as_an_id_that_exists_nowhere(server: Served) -> None:
    url = server.url
    absent = call(url, "cstp.getDecision", {"id": "globex-only"}, ACME_TOKEN)
    nowhere = call(url, "cstp.getDecision", {"id": "no-such-id-anywhere"}, ACME_TOKEN)
    assert absent["error"] == nowhere["error"]
    review = {"id": "globex-only", "outcome": "success"}
    refused = call(url, "cstp.reviewDecision", review, ACME_TOKEN)
    assert refused["error"]["code"] == -32602
    assert "globex" not in json.dumps(refused).lower()


def test_the_tenant_param_is_checked_in_the_contract_order(server: Served) -> None:
    url = server.url
    cases = [
        (ORG_TOKEN, {"query": "kafka"}, -32602, "tenant"),  # several granted: name one
        (ROOT_TOKEN, {"query": "kafka"}, -32602, "tenant"),  # "*" granted: name one
        (ACME_TOKEN, {"query": "kafka", "tenant": 7}, -32602, "tenant"),
        (ACME_TOKEN, {"query": "kafka", "tenant": "Acme"}, -32602, "tenant"),
        (ACME_TOKEN, {"query": "kafka", "tenant": "a" * 64}, -32602, "tenant"),
        # Not granted is decided before the other params are read.
        (ACME_TOKEN, {"query": "", "limit": 0, "tenant": "globex"}, -32004, None),
    ]
    for token, params, code, field in cases:
        error = call(url, "cstp.queryDecisions", params, token)["error"]
        assert error["code"] == code, params
        if field is not None:
            assert [e["field"] for e in error["data"]["errors"]] == [field], params
    listed = call(url, "cstp.listTenants", {"tenant": "acme"}, ACME_TOKEN)["error"]
    assert [e["field"] for e in listed["data"]["errors"]] == ["tenant"]


def test_org_level_search_ranks_every_granted_tenant_as_one_list(server: Served) -> None:
    url = server.url
    params = {"query": "billing events kafka", "tenant": "*", "limit": 4}
    found = result(url, "cstp.queryDecisions", params, ORG_TOKEN)
    tenants = {d["tenant"] for d in found["decisions"]}
    assert tenants == {"acme", "globex"}
    distances = [d["distance"] for d in found["decisions"]]
    assert distances == sorted(distances) and found["total"] == len(found["decisions"]) == 4
    # Each tenant's own answer, merged by distance, gives the same list.
    alone = [
        {**d, "tenant": t}
        for t in ("acme", "globex")
        for d in result(url, "cstp.queryDecisions", {**params, "tenant": t}, ORG_TOKEN)["decisions"]
    ]
    alone.sort(key=lambda d: (d["distance"], d["tenant"], d["id"]))
    assert [(d["tenant"], d["id"]) for d in found["decisions"]] == [
        (d["tenant"], d["id"]) for d in alone[:4]
    ]
    # A token granted one tenant: "*" is that tenant alone.
    mine = result(url, "cstp.queryDecisions", params, ACME_TOKEN)
    assert {d["tenant"] for d in mine["decisions"]} == {"acme"}
    similar = {"proposal": {"tags": ["kafka", "billing"]}, "tenant": "*"}
    both = result(url, "cstp.findSimilarDecisions", similar, ORG_TOKEN)
    assert {d["tenant"] for d in both["decisions"]} == {"acme", "globex"}
    scores = [d["score"] for d in both["decisions"]]
    assert scores == sorted(scores, reverse=True)


def test_org_level_calibration_covers_every_granted_tenant(server: Served) -> None:
    url = server.url
    each = [
        result(url, "cstp.getCalibration", {"tenant": t}, ORG_TOKEN)["decisions"]
        for t in ("acme", "globex")
    ]
    every = result(url, "cstp.getCalibration", {"tenant": "*"}, ORG_TOKEN)["decisions"]
    assert every == sum(each) and min(each) > 0


def test_list_tenants_names_only_the_granted_tenants_that_exist(server: Served) -> None:
    url = server.url
    acme = result(url, "cstp.listTenants", {}, ACME_TOKEN)["tenants"]
    assert [t["name"] for t in acme] == ["acme"] and acme[0]["decisions"] >= 2
    org = result(url, "cstp.listTenants", {}, ORG_TOKEN)["tenants"]
    assert [t["name"] for t in org] == ["acme", "globex"]
    # Reads never create a tenant.
    assert result(url, "cstp.listDecisions", {"tenant": "ghost"}, ROOT_TOKEN)["decisions"] == []
    names = [t["name"] for t in result(url, "cstp.listTenants", {}, ROOT_TOKEN)["tenants"]]
    assert "ghost" not in names and {"acme", "globex"} <= set(names)


def test_a_cursor_is_bound_to_its_tenant(server: Served) -> None:
    url = server.url
    page = result(url, "cstp.listDecisions", {"limit": 1, "tenant": "acme"}, ORG_TOKEN)
    cursor = page["nextCursor"]
    assert cursor is not None
    ok = call(
        url, "cstp.listDecisions", {"limit": 1, "tenant": "acme", "cursor": cursor}, ORG_TOKEN
    )
    assert "result" in ok
    moved = {"limit": 1, "tenant": "globex", "cursor": cursor}
    error = call(url, "cstp.listDecisions", moved, ORG_TOKEN)["error"]
    assert error["code"] == -32602
    assert [e["field"] for e in error["data"]["errors"]] == ["cursor"]


def test_a_token_without_tenants_keeps_the_store_as_it_was(server: Served) -> None:
    url = server.url
    decision = {"decision": {"id": "legacy-1", "title": "Legacy billing decision"}}
    assert result(url, "cstp.recordDecision", decision, LEGACY_TOKEN)["created"] is True
    found = result(url, "cstp.getDecision", {"id": "legacy-1"}, LEGACY_TOKEN)
    assert found["tenant"] == "default"
    assert call(url, "cstp.getDecision", {"id": "legacy-1"}, ACME_TOKEN)["error"]["code"] == -32602
    default = {"id": "legacy-1", "tenant": "default"}
    assert (
        result(url, "cstp.getDecision", default, ROOT_TOKEN)["title"] == "Legacy billing decision"
    )
    assert ACME not in json.dumps(result(url, "cstp.listDecisions", {}, LEGACY_TOKEN))
