"""getStats, deeper getCalibration, checkDrift and recency over real HTTP, on embedded Chroma
and on `chroma run`; the new methods at every door (rpc.discover, agent card, /mcp)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from statsmodels.stats.proportion import proportion_confint

from tests.decisions.lifecycle_wire import OTHER_TOKEN, WRITER_TOKEN, Served, served
from tests.decisions.wire import call, error_fields, result
from tests.mcp_session import mcp_session

pytestmark = pytest.mark.slow
NEW_METHODS = ["cstp.updateDecision", "cstp.deleteDecision", "cstp.getStats", "cstp.checkDrift"]


@pytest.fixture(scope="module", params=["embedded", "chroma-server"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    with served(tmp_path_factory.mktemp(request.param), request.param) as s:
        yield s


def ago(days: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")


def write(url: str, record_id: str, token: str = WRITER_TOKEN, **fields: Any) -> None:
    decision = {"id": record_id, "title": f"Decision {record_id}", **fields}
    assert result(url, "cstp.recordDecision", {"decision": decision}, token)["created"] is True


def test_get_stats_counts_by_month_outcome_category_status_and_agent(server: Served) -> None:
    url = server.url
    write(url, "st-1", category="st", date="2026-01-05T10:00:00Z", outcome="success")
    write(url, "st-2", category="st", date="2026-01-31T23:00:00-02:00", outcome="failure")
    write(url, "st-3", category="st", date="2025-12-01T00:00:00Z", status="proposed")
    write(url, "st-4", category="st", date="2026-01-10T00:00:00Z", token=OTHER_TOKEN)
    found = result(url, "cstp.getStats", {"filters": {"category": "st"}})
    assert found == {
        "decisions": 4,
        "undated": 0,
        "byMonth": [
            {"month": "2025-12", "outcomes": {"none": 1}},
            # 2026-01-31T23:00-02:00 is 2026-02-01T01:00Z.
            {"month": "2026-01", "outcomes": {"success": 1, "none": 1}},
            {"month": "2026-02", "outcomes": {"failure": 1}},
        ],
        "byCategory": [{"category": "st", "decisions": 4}],
        "byStatus": [{"status": "decided", "decisions": 3}, {"status": "proposed", "decisions": 1}],
        "byAgent": [{"agent": "planner", "decisions": 3}, {"agent": "builder", "decisions": 1}],
    }
    narrowed = result(url, "cstp.getStats", {"filters": {"category": "st", "status": "proposed"}})
    assert narrowed["decisions"] == 1


CALIBRATION = [
    (0.9, "success"),
    (0.8, "success"),
    (0.7, "failure"),
    (0.3, "failure"),
    (0.2, "success"),
    (0.6, "partial"),
    (0.95, "success"),
    (0.1, "failure"),
]
SCORE = {"success": 1.0, "partial": 0.5, "failure": 0.0}


def test_calibration_has_murphy_wilson_agents_and_months_matching_an_oracle(
    server: Served,
) -> None:
    url = server.url
    for n, (confidence, outcome) in enumerate(CALIBRATION):
        token = OTHER_TOKEN if n % 2 else WRITER_TOKEN
        write(
            url,
            f"cal-{n}",
            category="cal",
            confidence=confidence,
            outcome=outcome,
            date=f"2026-0{1 + n % 3}-10T00:00:00Z",
            token=token,
        )
    found = result(url, "cstp.getCalibration", {"filters": {"category": "cal"}, "bins": 2})
    squared = [(c - SCORE[o]) ** 2 for c, o in CALIBRATION]
    assert found["brierScore"] == pytest.approx(sum(squared) / len(squared), abs=1e-12)
    total = found["reliability"] - found["resolution"] + found["uncertainty"]
    assert abs(total - found["brierScoreBinned"]) < 1e-9
    scores = [SCORE[o] for _, o in CALIBRATION]
    mean = sum(scores) / len(scores)
    assert found["uncertainty"] == pytest.approx(
        sum((s - mean) ** 2 for s in scores) / len(scores), abs=1e-12
    )
    for b in found["bins"]:
        successes = b["successRate"] * b["count"]
        low, high = proportion_confint(successes, b["count"], alpha=0.05, method="wilson")
        assert (b["successRateLow"], b["successRateHigh"]) == pytest.approx((low, high), abs=1e-12)
    assert [(a["agent"], a["decisions"]) for a in found["byAgent"]] == [
        ("builder", 4),
        ("planner", 4),
    ]
    planner = [s for n, s in enumerate(squared) if n % 2 == 0]
    assert found["byAgent"][1]["brierScore"] == pytest.approx(sum(planner) / 4, abs=1e-12)
    assert [(m["month"], m["decisions"]) for m in found["byMonth"]] == [
        ("2026-01", 3),
        ("2026-02", 3),
        ("2026-03", 2),
    ]


def test_check_drift_flags_a_category_that_got_worse(server: Served) -> None:
    url = server.url
    for n in range(5):
        write(
            url,
            f"dr-a-recent-{n}",
            category="dr-a",
            confidence=0.9,
            outcome="failure",
            date=ago(2 + n),
        )
        write(
            url,
            f"dr-a-base-{n}",
            category="dr-a",
            confidence=0.9,
            outcome="success",
            date=ago(60 + n),
        )
        write(
            url, f"dr-b-recent-{n}", category="dr-b", confidence=0.9, outcome="success", date=ago(3)
        )
        write(
            url, f"dr-b-base-{n}", category="dr-b", confidence=0.9, outcome="success", date=ago(90)
        )
    write(url, "dr-a-old", category="dr-a", confidence=0.9, outcome="failure", date=ago(400))
    found = result(url, "cstp.checkDrift", {"filters": {"category": ["dr-a", "dr-b"][0]}})
    assert found["groups"] == [
        {
            "group": "dr-a",
            "recentBrier": pytest.approx(0.81),
            "baselineBrier": pytest.approx(0.01),
            "recentDecisions": 5,
            "baselineDecisions": 5,
            "drifted": True,
        }
    ]
    steady = result(url, "cstp.checkDrift", {"filters": {"category": "dr-b"}, "recentDays": 10})
    assert [(g["group"], g["drifted"]) for g in steady["groups"]] == [("dr-b", False)]
    agents = result(url, "cstp.checkDrift", {"groupBy": "agent", "filters": {"category": "dr-a"}})
    assert [(g["group"], g["recentDecisions"], g["drifted"]) for g in agents["groups"]] == [
        ("planner", 5, True)
    ]


def test_recency_reorders_by_decayed_similarity_and_keeps_the_raw_distance(server: Served) -> None:
    url = server.url
    titles = {
        "rc-old": ("Shard the orders database by customer region", 720),
        "rc-mid": ("Shard the orders database by region", 200),
        "rc-new": ("Shard the orders database by tenant", 1),
    }
    for record_id, (title, days) in titles.items():
        write(url, record_id, category="rc", title=title, date=ago(days))
    query = {"query": "shard the orders database by customer region", "filters": {"category": "rc"}}
    plain = result(url, "cstp.queryDecisions", query)["decisions"]
    assert plain[0]["id"] == "rc-old"
    recent = result(url, "cstp.queryDecisions", {**query, "recencyHalfLifeDays": 30})["decisions"]
    distance = {d["id"]: d["distance"] for d in plain}
    assert {d["id"]: d["distance"] for d in recent} == distance
    now = datetime.now(UTC)

    def decayed(d: dict[str, Any]) -> float:
        age = (now - datetime.fromisoformat(d["date"])).total_seconds() / 86400
        return float((1 - d["distance"] / 2) * 0.5 ** (age / 30))

    assert [d["id"] for d in recent] == [d["id"] for d in sorted(plain, key=decayed, reverse=True)]
    assert [d["id"] for d in recent] == ["rc-new", "rc-mid", "rc-old"]
    for mode in ("keyword", "hybrid"):
        params = {**query, "recencyHalfLifeDays": 30, "retrievalMode": mode}
        ranked = result(url, "cstp.queryDecisions", params)["decisions"]
        assert [d["id"] for d in ranked] == ["rc-new", "rc-mid", "rc-old"], mode
        assert all("score" in d for d in ranked)


@pytest.mark.parametrize(
    ("method", "params", "fields"),
    [
        ("cstp.queryDecisions", {"query": "x", "recencyHalfLifeDays": 0}, ["recencyHalfLifeDays"]),
        ("cstp.queryDecisions", {"query": "x", "recencyHalfLifeDays": -3}, ["recencyHalfLifeDays"]),
        (
            "cstp.queryDecisions",
            {"query": "x", "recencyHalfLifeDays": "30"},
            ["recencyHalfLifeDays"],
        ),
        (
            "cstp.queryDecisions",
            {"query": "x", "recencyHalfLifeDays": True},
            ["recencyHalfLifeDays"],
        ),
        ("cstp.getStats", {"filters": {"minConfidence": 2}}, ["filters.minConfidence"]),
        ("cstp.getStats", {"filter": {}}, ["filter"]),
        ("cstp.checkDrift", {"recentDays": 0}, ["recentDays"]),
        ("cstp.checkDrift", {"recentDays": 366}, ["recentDays"]),
        ("cstp.checkDrift", {"recentDays": 30.0}, ["recentDays"]),
        ("cstp.checkDrift", {"baselineDays": 3651}, ["baselineDays"]),
        ("cstp.checkDrift", {"groupBy": "team"}, ["groupBy"]),
        ("cstp.checkDrift", {"filters": {"stakes": []}}, ["filters.stakes"]),
        ("cstp.getCalibration", {"bins": 1}, ["bins"]),
    ],
    ids=[
        "half-life-zero",
        "half-life-negative",
        "half-life-string",
        "half-life-bool",
        "stats-filter",
        "stats-unknown",
        "drift-recent-0",
        "drift-recent-366",
        "drift-float",
        "drift-baseline",
        "drift-group",
        "drift-filter",
        "calibration-bins",
    ],
)
def test_new_params_are_validated_naming_the_field(
    server: Served, method: str, params: dict[str, Any], fields: list[str]
) -> None:
    assert error_fields(call(server.url, method, params)) == fields


def test_the_new_methods_are_discovered_on_the_card_and_as_mcp_tools(server: Served) -> None:
    url = server.url
    document = result(url, "rpc.discover", {})
    described = {m["name"]: m for m in document["methods"]}
    assert set(NEW_METHODS) <= set(described)
    card = httpx.get(f"{url}/.well-known/agent-card.json").json()
    skills = {s["id"]: s for s in card["skills"]}
    assert set(NEW_METHODS) <= set(skills)
    assert skills["cstp.deleteDecision"]["securityRequirements"] == [
        {"schemes": {"bearer": {"list": ["write"]}}}
    ]
    tools = _mcp_tools(url)
    assert set(NEW_METHODS) <= tools


def _mcp_tools(url: str) -> set[str]:
    import anyio

    async def listed() -> set[str]:
        async with mcp_session(url, WRITER_TOKEN) as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    return anyio.run(listed)
