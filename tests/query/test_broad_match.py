"""`broadMatch: true` when no result lies within the model's topical distance (CONTRACT.md,
queryDecisions and findSimilarDecisions; issue 44, item 8): set by the service by one rule
(a2a.query.matching.is_broad), and `cstp query` prints what the result says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a.client.precedents import result_note
from a2a.embeddings import Embedder
from a2a.query.matching import (
    BROAD_MATCH,
    BROAD_MATCH_DISTANCE,
    MEASURED_LINES,
    broad_match_line,
    is_broad,
)
from a2a.query.results import QueryDecisionsResult
from a2a.settings import EMBEDDING_MODELS, load_settings
from tests.conftest import EXAMPLES_TOKENS, rpc_call, served_app
from tests.servers import cstp

#: Off-topic for decisions about software (bench/off_topic_queries.txt) and on-topic.
OFF_TOPIC = "best sourdough starter feeding schedule"
ON_TOPIC = "billing events on partitioned Kafka topics"
TOKEN = EXAMPLES_TOKENS["cli"]


def call(base_url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(
        f"{base_url}/cstp",
        json=rpc_call(method, params),
        headers={"authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )
    body = response.json()
    assert "result" in body, body
    result: dict[str, Any] = body["result"]
    return result


def test_the_rule_needs_a_result_with_a_distance_and_none_within_the_line() -> None:
    assert is_broad([0.8, 0.9], 0.67)
    assert not is_broad([0.9, 0.6], 0.67)  # the closest, not the first
    assert not is_broad([0.67], 0.67)  # on the line is within
    assert not is_broad([], 0.67)
    assert not is_broad([None, None], 0.67)  # structural matches: nothing to judge by
    assert not is_broad([0.9], None)  # no line: never broad


def test_every_bundled_model_has_a_measured_line_and_the_setting_wins() -> None:
    bundled = [m for m in EMBEDDING_MODELS if m != "chroma-onnx-all-minilm-l6-v2"]
    assert sorted(MEASURED_LINES) == sorted(bundled)
    assert broad_match_line("all-minilm-l6-v2-int8") == BROAD_MATCH_DISTANCE == 0.67
    assert broad_match_line("chroma-onnx-all-minilm-l6-v2") is None  # downloads: not measured
    assert broad_match_line("chroma-onnx-all-minilm-l6-v2", 0.7) == 0.7
    assert broad_match_line("all-minilm-l6-v2-int8", 0.3) == 0.3


@pytest.mark.slow
def test_an_off_topic_query_is_a_broad_match_and_an_on_topic_one_is_not(
    examples_service: str,
) -> None:
    on = call(examples_service, "cstp.queryDecisions", {"query": ON_TOPIC})
    assert on["decisions"] and min(d["distance"] for d in on["decisions"]) <= 0.67
    assert "broadMatch" not in on
    off = call(examples_service, "cstp.queryDecisions", {"query": OFF_TOPIC})
    assert off["decisions"] and min(d["distance"] for d in off["decisions"]) > 0.67
    assert off["broadMatch"] is True
    for mode in ("keyword", "hybrid"):
        params = {"query": OFF_TOPIC, "retrievalMode": mode}
        again = call(examples_service, "cstp.queryDecisions", params)
        assert again.get("broadMatch") is (True if again["decisions"] else None), mode
    # findSimilarDecisions' matches are structural (no distance): nothing to judge by.
    similar = call(examples_service, "cstp.findSimilarDecisions", {"proposal": {"tags": ["kafka"]}})
    assert similar["decisions"] and "broadMatch" not in similar


@pytest.mark.slow
def test_cstp_query_prints_what_the_result_says(examples_service: str) -> None:
    env = {"CSTP_URL": examples_service, "CSTP_TOKEN": TOKEN}
    off = cstp("query", OFF_TOPIC, env=env)
    assert off.returncode == 0, off.stderr
    assert off.stdout.splitlines()[0] == BROAD_MATCH
    on = cstp("query", ON_TOPIC, env=env)
    assert on.returncode == 0, on.stderr
    assert BROAD_MATCH not in on.stdout
    as_json = json.loads(cstp("query", OFF_TOPIC, "--json", env=env).stdout)
    assert as_json["broadMatch"] is True
    assert result_note(QueryDecisionsResult.model_validate(as_json)) == BROAD_MATCH


async def test_org_level_results_are_judged_as_one_list(tmp_path: Path, embedder: Embedder) -> None:
    settings = load_settings(data_dir=tmp_path / "data", agent_id="test-agent")
    async with served_app(settings, embedder) as (_, client):
        for tenant, title in (
            ("acme", "Adopt Kafka for billing events"),
            ("globex", "Use Postgres"),
        ):
            decision = {"title": title, "tags": ["kafka"]}
            params = {"decision": decision, "tenant": tenant}
            await client.post("/cstp", json=rpc_call("cstp.recordDecision", params))

        async def query(method: str, params: dict[str, Any]) -> dict[str, Any]:
            body = (await client.post("/cstp", json=rpc_call(method, params))).json()
            result: dict[str, Any] = body["result"]
            return result

        off = await query("cstp.queryDecisions", {"query": OFF_TOPIC, "tenant": "*"})
        assert {d["tenant"] for d in off["decisions"]} == {"acme", "globex"}
        assert off["broadMatch"] is True
        on = await query("cstp.queryDecisions", {"query": "kafka billing", "tenant": "*"})
        assert "broadMatch" not in on
        proposal = {"proposal": {"tags": ["kafka"]}, "tenant": "*"}
        assert "broadMatch" not in await query("cstp.findSimilarDecisions", proposal)


async def test_the_setting_moves_the_line(tmp_path: Path, embedder: Embedder) -> None:
    settings = load_settings(
        data_dir=tmp_path / "data", agent_id="test-agent", broad_match_distance=0.05
    )
    async with served_app(settings, embedder) as (_, client):
        decision = {"title": "Adopt Kafka for billing events"}
        await client.post("/cstp", json=rpc_call("cstp.recordDecision", {"decision": decision}))
        params = {"query": "kafka billing"}
        body = (await client.post("/cstp", json=rpc_call("cstp.queryDecisions", params))).json()
        assert body["result"]["broadMatch"] is True
        served = (await client.get("/console/matching.json")).json()
        assert served["broadMatchDistance"] == 0.05
