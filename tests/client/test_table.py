"""`cstp query`'s table (a2a.client.table): what a user reads at a glance."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from a2a.client.table import decisions_table
from a2a.query.results import QueryDecisionsResult


def _rendered(**extra: Any) -> list[str]:
    unset = dict.fromkeys(["category", "confidence", "stakes", "status", "outcome", "date"])
    hits = [
        {**unset, "id": "a1", "title": "Kafka for billing", "source": None, "distance": 0.584},
        {**unset, "id": "b2", "title": "Queue for billing", "source": None, "distance": 0.769},
    ]
    for hit in hits:
        hit.update(extra)
    if "score" in extra:
        hits[1]["score"] = 0.0312
    result = QueryDecisionsResult.model_validate(
        {"decisions": hits, "total": 2, "query": "billing", "queryTimeMs": 3, "agent": "x"}
    )
    console = Console(width=160, record=True, color_system=None)
    console.print(decisions_table(result))
    return console.export_text().splitlines()


def test_results_ranked_by_score_show_it_first_and_say_so() -> None:
    # Reported by a new user: a hybrid answer's table showed distances out of order under a
    # "distance" heading, the score it was ranked by only in --json.
    lines = _rendered(score=0.0366)
    assert "by score" in lines[0]
    header = next(line for line in lines if line.startswith("┃"))
    assert header.index("score") < header.index("distance") < header.index("id")
    rows = [line for line in lines if "billing" in line and "decision(s)" not in line]
    assert ["0.0366" in rows[0], "0.0312" in rows[1]] == [True, True]


def test_results_ranked_by_distance_have_no_score_column() -> None:
    lines = _rendered()
    assert "by distance" in lines[0]
    header = next(line for line in lines if line.startswith("┃"))
    assert "score" not in header


def test_a_federated_list_merged_by_rank_says_so_and_names_each_peer() -> None:
    unset = dict.fromkeys(["category", "confidence", "stakes", "status", "outcome", "date"])
    hits = [
        {**unset, "id": "a1", "title": "Ours", "source": None, "distance": 0.7, "peer": None},
        {**unset, "id": "a1", "title": "Theirs", "source": None, "distance": 0.2, "peer": "b"},
    ]
    result = QueryDecisionsResult.model_validate(
        {
            "decisions": hits,
            "total": 2,
            "query": "q",
            "queryTimeMs": 3,
            "agent": "x",
            "merge": "rank",
        }
    )
    console = Console(width=160, record=True, color_system=None)
    console.print(decisions_table(result, peers=True))
    lines = console.export_text().splitlines()
    # Each service's distances, merged by rank: not in order, so not "by distance".
    assert "by rank" in lines[0]
    assert [line.split("│")[-2].strip() for line in lines if "a1" in line] == ["", "b"]
