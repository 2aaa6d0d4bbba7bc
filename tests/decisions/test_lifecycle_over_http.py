"""A decision's whole life over real HTTP, on embedded Chroma and on `chroma run`: update
with history, delete, links (CONTRACT.md, "Lifecycle of a decision")."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.decisions.lifecycle_wire import (
    ADMIN,
    ADMIN_TOKEN,
    OTHER_TOKEN,
    READER_TOKEN,
    WRITER,
    WRITER_TOKEN,
    Served,
    environment,
    served,
    service,
)
from tests.decisions.wire import call, error_fields, result
from tests.servers import chroma_server, output_of

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["embedded", "chroma-server"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    with served(tmp_path_factory.mktemp(request.param), request.param) as s:
        yield s


def record(url: str, record_id: str, token: str = WRITER_TOKEN, **fields: Any) -> None:
    decision = {"id": record_id, "title": f"Decision {record_id}", **fields}
    assert result(url, "cstp.recordDecision", {"decision": decision}, token)["created"] is True


def update(url: str, record_id: str, changes: dict[str, Any], reason: str = "why") -> Any:
    return result(
        url, "cstp.updateDecision", {"id": record_id, "changes": changes, "reason": reason}
    )


def get(url: str, record_id: str) -> dict[str, Any]:
    found: dict[str, Any] = result(url, "cstp.getDecision", {"id": record_id})
    return found


# -- updateDecision --------------------------------------------------------------------------


def test_an_update_returns_the_summary_and_keeps_old_and_new_in_the_history(
    server: Served,
) -> None:
    url = server.url
    record(url, "up-1", category="architecture", confidence=0.8, tags=["kafka"])
    assert get(url, "up-1")["history"] == []
    summary = update(url, "up-1", {"confidence": 0.6, "tags": ["kafka", "billing"]}, "lag")
    assert (summary["id"], summary["confidence"], summary["category"]) == (
        "up-1",
        0.6,
        "architecture",
    )
    after = get(url, "up-1")
    assert after["tags"] == ["kafka", "billing"]
    [entry] = after["history"]
    assert entry["by"] == WRITER and entry["reason"] == "lag"
    assert entry["changes"] == {"confidence": [0.8, 0.6], "tags": [["kafka"], ["kafka", "billing"]]}
    assert datetime.fromisoformat(entry["at"]) >= datetime.fromisoformat(after["recordedAt"])


def test_a_changed_text_is_searchable_at_once(server: Served) -> None:
    url = server.url
    record(url, "up-text", context="Nothing in particular.")
    update(url, "up-text", {"title": "Adopt zanzibar-style authorization tuples"})
    found = result(
        url,
        "cstp.queryDecisions",
        {"query": "zanzibar authorization tuples", "retrievalMode": "keyword", "limit": 3},
    )
    assert [d["id"] for d in found["decisions"]][:1] == ["up-text"]
    assert found["decisions"][0]["title"] == "Adopt zanzibar-style authorization tuples"


BAD_UPDATES = [
    ({"id": "up-bad", "changes": {}, "reason": "r"}, ["changes"]),
    ({"id": "up-bad", "changes": {"confidence": 0.5}}, ["reason"]),
    ({"id": "up-bad", "changes": {"confidence": 0.5}, "reason": ""}, ["reason"]),
    ({"id": "up-bad", "changes": {"confidence": 0.5}, "reason": "r" * 1001}, ["reason"]),
    ({"id": "up-bad", "changes": {"title": None}, "reason": "r"}, ["changes.title"]),
    ({"id": "up-bad", "changes": {"confidence": 1.5}, "reason": "r"}, ["changes.confidence"]),
    ({"id": "up-bad", "changes": {"outcome": "success"}, "reason": "r"}, ["changes.outcome"]),
    ({"id": "up-bad", "changes": {"recordedBy": "x"}, "reason": "r"}, ["changes.recordedBy"]),
    (
        {"id": "up-bad", "changes": {"confidence": 0.5, "tags": ["ok", 3]}, "reason": "r"},
        ["changes.tags[1]"],
    ),
    (
        {"id": "up-bad", "changes": {"supersedes": ["nope"]}, "reason": "r"},
        ["changes.supersedes[0]"],
    ),
    (
        {"id": "up-bad", "changes": {"confidence": 0.5, "relatedTo": ["up-bad"]}, "reason": "r"},
        ["changes.relatedTo[0]"],
    ),
    ({"id": "up-bad", "changes": {"relatedTo": ["x"] * 21}, "reason": "r"}, ["changes.relatedTo"]),
    ({"id": "nowhere", "changes": {"confidence": 0.5}, "reason": "r"}, ["id"]),
    ({"id": "up-bad", "changes": {"confidence": 0.5}, "reason": "r", "x": 1}, ["x"]),
]


def test_bad_updates_are_refused_whole_naming_the_field(server: Served) -> None:
    url = server.url
    record(url, "up-bad", confidence=0.9, tags=["a"])
    before = get(url, "up-bad")
    for params, fields in BAD_UPDATES:
        assert error_fields(call(url, "cstp.updateDecision", params)) == fields, params
    assert get(url, "up-bad") == before


def test_an_update_needs_scope_write(server: Served) -> None:
    record(server.url, "up-scope")
    params = {"id": "up-scope", "changes": {"confidence": 0.5}, "reason": "r"}
    answer = call(server.url, "cstp.updateDecision", params, READER_TOKEN)
    assert answer["error"]["code"] == -32004
    assert answer["error"]["data"] == {"requiredScope": "write"}


def test_an_update_to_the_values_already_stored_keeps_no_history_entry(server: Served) -> None:
    # Seen in CI: a writer setting the confidence the record already had left no entry.
    url = server.url
    record(url, "up-same", confidence=0.5)
    assert update(url, "up-same", {"confidence": 0.5})["confidence"] == 0.5
    assert get(url, "up-same")["history"] == []
    update(url, "up-same", {"confidence": 0.6}, reason="changed")
    assert [e["reason"] for e in get(url, "up-same")["history"]] == ["changed"]


def test_eight_concurrent_updaters_all_land_in_the_history_in_order(server: Served) -> None:
    url = server.url
    # 0.05 is none of the writers' values n / 10: every update is a change, in any order.
    record(url, "up-race", confidence=0.05)
    answers: list[dict[str, Any]] = []

    def writer(n: int) -> None:
        params = {"id": "up-race", "changes": {"confidence": n / 10}, "reason": f"writer {n}"}
        answers.append(call(url, "cstp.updateDecision", params))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all("result" in a for a in answers), answers
    history = get(url, "up-race")["history"]
    assert sorted(e["reason"] for e in history) == [f"writer {n}" for n in range(1, 9)]
    # In order: each change starts from the value the one before it left.
    values = [0.05] + [e["changes"]["confidence"][1] for e in history]
    assert [e["changes"]["confidence"][0] for e in history] == values[:-1]
    assert [e["at"] for e in history] == sorted(e["at"] for e in history)
    assert get(url, "up-race")["confidence"] == values[-1]


# -- deleteDecision --------------------------------------------------------------------------


def test_a_deleted_decision_is_gone_from_every_read_and_may_be_recorded_again(
    server: Served,
) -> None:
    url = server.url
    record(url, "del-1", category="del-cat", title="Adopt Kafka for billing events")
    stats_before = result(url, "cstp.getStats", {"filters": {"category": "del-cat"}})
    assert stats_before["decisions"] == 1
    assert result(url, "cstp.deleteDecision", {"id": "del-1", "reason": "twice"}) == {
        "id": "del-1",
        "deleted": True,
    }
    assert_gone(url, "del-1", "del-cat")
    record(url, "del-1", title="Adopt Kafka for billing events")
    assert get(url, "del-1")["history"] == []


def assert_gone(url: str, record_id: str, category: str) -> None:
    assert error_fields(call(url, "cstp.getDecision", {"id": record_id})) == ["id"]
    for mode in ("semantic", "keyword", "hybrid"):
        found = result(
            url,
            "cstp.queryDecisions",
            {"query": "Adopt Kafka for billing events", "retrievalMode": mode, "limit": 50},
        )
        assert record_id not in [d["id"] for d in found["decisions"]], mode
    listed = result(url, "cstp.listDecisions", {"filters": {"category": category}})
    assert listed["decisions"] == []
    assert result(url, "cstp.getStats", {"filters": {"category": category}})["decisions"] == 0
    similar = call(url, "cstp.findSimilarDecisions", {"decisionId": record_id})
    assert error_fields(similar) == ["decisionId"]


def test_a_writer_deletes_only_its_own_and_an_admin_anyones(server: Served) -> None:
    url = server.url
    record(url, "del-other", token=OTHER_TOKEN)
    answer = call(url, "cstp.deleteDecision", {"id": "del-other", "reason": "r"}, WRITER_TOKEN)
    assert answer["error"]["code"] == -32004
    assert answer["error"]["data"] == {"requiredScope": "admin"}
    assert get(url, "del-other")["id"] == "del-other"
    answer = call(url, "cstp.deleteDecision", {"id": "del-other", "reason": "r"}, READER_TOKEN)
    assert answer["error"]["data"] == {"requiredScope": "write"}
    assert result(url, "cstp.deleteDecision", {"id": "del-other", "reason": "r"}, ADMIN_TOKEN)[
        "deleted"
    ]
    assert error_fields(call(url, "cstp.getDecision", {"id": "del-other"})) == ["id"]


def test_an_admin_token_may_also_record_and_read(server: Served) -> None:
    record(server.url, "del-admin-own", token=ADMIN_TOKEN)
    assert get(server.url, "del-admin-own")["recordedBy"] == ADMIN


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({"id": "nowhere", "reason": "r"}, ["id"]),
        ({"id": "del-x"}, ["reason"]),
        ({"id": "del-x", "reason": " "}, ["reason"]),
        ({"id": 3, "reason": "r"}, ["id"]),
        ({"id": "del-x", "reason": "r", "force": True}, ["force"]),
    ],
    ids=["unknown-id", "no-reason", "blank-reason", "id-not-string", "unknown-key"],
)
def test_bad_deletes_name_the_field(
    server: Served, params: dict[str, Any], fields: list[str]
) -> None:
    assert error_fields(call(server.url, "cstp.deleteDecision", params)) == fields


def test_each_deletion_is_one_log_line_with_agent_tenant_id_and_reason_never_content(
    server: Served,
) -> None:
    url = server.url
    record(url, "del-log", context="SECRET-CONTEXT-TEXT")
    result(url, "cstp.deleteDecision", {"id": "del-log", "reason": "duplicate entry"})
    lines = [
        json.loads(line)
        for line in output_of(server.process).splitlines()
        if line.startswith("{") and '"decision deleted"' in line
    ]
    mine = [line for line in lines if line.get("id") == "del-log"]
    assert len(mine) == 1
    entry = mine[0]
    assert (entry["agent"], entry["tenant"], entry["reason"]) == (
        WRITER,
        "default",
        "duplicate entry",
    )
    assert "SECRET-CONTEXT-TEXT" not in output_of(server.process)


# -- links -----------------------------------------------------------------------------------


def test_supersession_marks_the_old_one_and_links_read_both_ways(server: Served) -> None:
    url = server.url
    record(url, "ln-old", status="decided")
    record(url, "ln-rel")
    record(url, "ln-new", supersedes=["ln-old"], relatedTo=["ln-rel"])
    old = get(url, "ln-old")
    assert (old["status"], old["supersededBy"]) == ("superseded", "ln-new")
    assert old["links"] == {"supersedes": [], "supersededBy": ["ln-new"], "relatedTo": []}
    assert [e["changes"]["status"] for e in old["history"]] == [["decided", "superseded"]]
    assert get(url, "ln-new")["links"] == {
        "supersedes": ["ln-old"],
        "supersededBy": [],
        "relatedTo": ["ln-rel"],
    }
    assert get(url, "ln-rel")["links"]["relatedTo"] == ["ln-new"]
    listed = result(
        url, "cstp.queryDecisions", {"query": "x", "filters": {"status": "superseded"}, "limit": 50}
    )
    assert "ln-old" in [d["id"] for d in listed["decisions"]]


def test_unknown_link_ids_and_cycles_are_refused_naming_the_field(server: Served) -> None:
    url = server.url
    record(url, "cy-a")
    bad = {"decision": {"id": "cy-x", "title": "t", "supersedes": ["cy-a", "nowhere"]}}
    assert error_fields(call(url, "cstp.recordDecision", bad)) == ["decision.supersedes[1]"]
    bad = {"decision": {"id": "cy-x", "title": "t", "relatedTo": ["nowhere"]}}
    assert error_fields(call(url, "cstp.recordDecision", bad)) == ["decision.relatedTo[0]"]
    assert error_fields(call(url, "cstp.getDecision", {"id": "cy-x"})) == ["id"]
    record(url, "cy-b", supersedes=["cy-a"])
    record(url, "cy-c", supersedes=["cy-b"])
    cycle = {"id": "cy-a", "changes": {"supersedes": ["cy-c"]}, "reason": "r"}
    assert error_fields(call(url, "cstp.updateDecision", cycle)) == ["changes.supersedes"]
    assert get(url, "cy-a")["links"]["supersedes"] == []


def test_updating_links_moves_the_reverse_and_restores_the_status(server: Served) -> None:
    url = server.url
    record(url, "mv-a", status="proposed")
    record(url, "mv-b")
    record(url, "mv-new", supersedes=["mv-a"])
    update(url, "mv-new", {"supersedes": ["mv-b"], "relatedTo": ["mv-a"]})
    a = get(url, "mv-a")
    assert (a["status"], a["supersededBy"]) == ("proposed", None)
    assert a["links"] == {"supersedes": [], "supersededBy": [], "relatedTo": ["mv-new"]}
    assert get(url, "mv-b")["status"] == "superseded"
    entry = get(url, "mv-new")["history"][-1]
    assert entry["changes"]["supersedes"] == [["mv-a"], ["mv-b"]]


def test_a_deleted_decision_leaves_no_dangling_link(server: Served) -> None:
    url = server.url
    record(url, "dg-old", status="decided")
    record(url, "dg-rel")
    record(url, "dg-new", supersedes=["dg-old"], relatedTo=["dg-rel"])
    record(url, "dg-later", relatedTo=["dg-new"])
    result(url, "cstp.deleteDecision", {"id": "dg-new", "reason": "wrong"})
    empty = {"supersedes": [], "supersededBy": [], "relatedTo": []}
    for other in ("dg-old", "dg-rel", "dg-later"):
        assert get(url, other)["links"] == empty, other
    assert get(url, "dg-old")["status"] == "decided"


# -- across a restart and across replicas ----------------------------------------------------


@pytest.mark.parametrize("store", ["embedded", "chroma-server"])
def test_history_and_links_survive_a_restart(tmp_path: Path, store: str) -> None:
    with chroma_server(tmp_path) if store == "chroma-server" else _no_server() as (chroma_url, _):
        env = environment(tmp_path, chroma_url)
        with service(env) as first:
            record(first.url, "rs-old")
            record(first.url, "rs-new", supersedes=["rs-old"])
            update(first.url, "rs-new", {"confidence": 0.4}, "restart me")
            before = (get(first.url, "rs-old"), get(first.url, "rs-new"))
        with service(env) as second:
            after = (get(second.url, "rs-old"), get(second.url, "rs-new"))
            assert after == before
            assert after[1]["history"][0]["reason"] == "restart me"
            assert after[0]["links"]["supersededBy"] == ["rs-new"]


@pytest.mark.parametrize("kept_warm", [True, False], ids=["read-before", "first-read-after"])
def test_a_delete_is_seen_by_a_second_replica(tmp_path: Path, kept_warm: bool) -> None:
    with chroma_server(tmp_path) as (chroma_url, _):
        env = environment(tmp_path, chroma_url)
        with service(env) as one, service(env) as two:
            record(one.url, "rp-1", category="rp-cat", title="Adopt Kafka for billing events")
            if kept_warm:
                assert get(two.url, "rp-1")["id"] == "rp-1"
                assert (
                    result(two.url, "cstp.getStats", {"filters": {"category": "rp-cat"}})[
                        "decisions"
                    ]
                    == 1
                )
            result(one.url, "cstp.deleteDecision", {"id": "rp-1", "reason": "dup"})
            assert_gone(two.url, "rp-1", "rp-cat")
            record(two.url, "rp-1", title="Adopt Kafka for billing events")
            assert get(one.url, "rp-1")["history"] == []


class _no_server:
    """In place of chroma_server for an embedded store: no URL, no process."""

    def __enter__(self) -> tuple[None, None]:
        return None, None

    def __exit__(self, *exc: object) -> None:
        return None


def test_the_typed_clients_update_delete_and_read_stats_and_drift(server: Served) -> None:
    from a2a.client.clients import AsyncCSTPClient, CSTPClient
    from a2a.client.errors import CSTPError

    url = server.url
    record(url, "cl-1", category="cl-cat", confidence=0.9)
    with CSTPClient(url, WRITER_TOKEN) as client:
        assert client.update_decision("cl-1", {"confidence": 0.4}, "typed").confidence == 0.4
        assert client.get_decision("cl-1").history[0].changes == {"confidence": (0.9, 0.4)}
        assert client.get_stats({"category": "cl-cat"}).decisions == 1
        assert client.check_drift(group_by="agent").groups is not None
        ranked = client.query_decisions("x", {"category": "cl-cat"}, recency_half_life_days=7)
        assert [d.id for d in ranked.decisions] == ["cl-1"]
    with CSTPClient(url, OTHER_TOKEN) as other:
        with pytest.raises(CSTPError) as refused:
            other.delete_decision("cl-1", "not mine")
        assert refused.value.code == -32004

    async def delete() -> bool:
        async with AsyncCSTPClient(url, WRITER_TOKEN) as client:
            assert (await client.get_stats({"category": "cl-cat"})).decisions == 1
            return (await client.delete_decision("cl-1", "typed")).deleted

    import anyio

    assert anyio.run(delete) is True
    assert error_fields(call(url, "cstp.getDecision", {"id": "cl-1"})) == ["id"]
