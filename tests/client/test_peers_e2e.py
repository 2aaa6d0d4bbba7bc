"""Federation at the client doors (CONTRACT.md, Federation): CSTPClient, AsyncCSTPClient and
the `cstp` commands against one real `cstp serve` whose peers are the service itself
(`self`, answering) and a dead port (`gone`, failing), tests/client/peered.py. The commands
run in-process (typer's runner: the real command, without a ~2 s interpreter start each)
over HTTP to that server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from a2a.cli.main import app
from a2a.client import AsyncCSTPClient, CSTPClient, InvalidParamsError, StoreUnavailableError
from a2a.rpc.protocol import to_wire
from tests.client.peered import GONE, MODEL, SELF, peered_server

pytestmark = pytest.mark.slow

TOKEN = "peers-token-0123456789"
QUERY = "reduce pager noise and burnout for responders"
PROPOSAL = {"tags": ["kafka", "postgres"], "category": "architecture"}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with peered_server(tmp_path_factory.mktemp("peered"), TOKEN) as base:
        yield base


def run(*args: str, url: str) -> tuple[int, str, str]:
    """`cstp ARGS` against `url`: (exit code, stdout, stderr)."""
    env = {"CSTP_URL": url, "CSTP_TOKEN": TOKEN, "COLUMNS": "200"}
    done = CliRunner().invoke(app, list(args), env=env)
    return done.exit_code, done.stdout, done.stderr


def test_query_with_peers_returns_one_list_each_decision_naming_its_peer(url: str) -> None:
    with CSTPClient(url, TOKEN) as client:
        alone = client.query_decisions(QUERY, limit=3)
        federated = client.query_decisions(QUERY, limit=6, peers="*")
    # Without peers: no block, no merge, and no `peer` on the wire.
    assert (alone.peers, alone.merge, alone.partial) == (None, None, None)
    assert all("peer" not in d for d in to_wire(alone)["decisions"])
    # `self` answers the same decisions as the service: each one twice, once as ours
    # (peer None) and once as `self`'s; same model, so merged by distance.
    assert federated.merge == "distance"
    ids = [d.id for d in federated.decisions]
    assert ids[::2] == ids[1::2] == [d.id for d in alone.decisions]
    pairs = zip(federated.decisions[::2], federated.decisions[1::2], strict=True)
    assert all({a.peer, b.peer} == {None, SELF} for a, b in pairs)
    # `gone` is missing: the answer is partial, and the block says why.
    block = federated.peers
    assert block is not None and federated.partial is True
    assert (block.total, block.successful, block.failed + block.skipped) == (2, 1, 1)
    details = {d.peer: d for d in block.details}
    # `decisions`: what the peer returned (its own list of `limit`), before the merge.
    assert (details[SELF].status, details[SELF].decisions) == ("successful", 6)
    assert details[GONE].status in ("failed", "skipped")
    if details[GONE].status == "failed":
        assert details[GONE].error is not None and details[GONE].error.code == -32003


async def test_async_client_finds_similar_with_peers_and_lists_them(url: str) -> None:
    async with AsyncCSTPClient(url, TOKEN, tenant="default") as client:
        similar = await client.find_similar_decisions(PROPOSAL, limit=4, peers=[SELF])
        # listPeers takes no `tenant`: the client's own is not sent with it.
        listed = await client.list_peers()
        with pytest.raises(InvalidParamsError) as caught:
            await client.find_similar_decisions(decision_id=similar.decisions[0].id, peers="*")
    assert similar.merge == "rank" and similar.partial is None
    assert similar.peers is not None and similar.peers.successful == 1
    assert {d.peer for d in similar.decisions} == {None, SELF}
    assert [e["field"] for e in caught.value.errors] == ["peers"]
    assert [(p.name, p.reachable, p.same_model) for p in listed.peers] == [
        (SELF, True, True),
        (GONE, False, False),
    ]
    assert listed.peers[0].embedding_model is not None
    assert listed.peers[0].embedding_model.name == MODEL


def test_get_decision_with_peer_reads_the_peers_record(url: str) -> None:
    with CSTPClient(url, TOKEN) as client:
        own = client.get_decision("c65c0367")
        theirs = client.get_decision("c65c0367", peer=SELF)
        with pytest.raises(StoreUnavailableError) as gone:
            client.get_decision("c65c0367", peer=GONE)
        with pytest.raises(InvalidParamsError) as unknown:
            client.get_decision("c65c0367", peer="nobody")
    assert theirs.peer == SELF and (theirs.id, theirs.title) == (own.id, own.title)
    assert gone.value.code == -32003 and gone.value.data == {"peer": GONE}
    assert [e["field"] for e in unknown.value.errors] == ["peer"]


def test_cstp_query_with_peers_shows_a_peer_column_and_the_missing_peer(url: str) -> None:
    code, out, err = run("query", QUERY, "--limit", "4", "--peers", "*", url=url)
    assert code == 0, err
    header = next(line for line in out.splitlines() if "┃" in line and "distance" in line)
    assert header.split("┃")[-2].strip() == "peer"
    rows = [line for line in out.splitlines() if "c65c0367" in line]
    assert sorted(row.split("│")[-2].strip() for row in rows) == ["", SELF]
    assert "peers: 1 of 2 answered" in out and "merged by distance" in out
    missing = [line for line in out.splitlines() if line.startswith(f"peer {GONE} ")]
    assert len(missing) == 1 and ("failed" in missing[0] or "skipped" in missing[0])
    # --json is the answer as sent: the block, the merge, each decision's peer.
    code, out, _ = run("query", QUERY, "--limit", "2", "--peers", SELF, "--json", url=url)
    sent = json.loads(out)
    assert code == 0 and sent["merge"] == "distance" and "partial" not in sent
    assert [d["peer"] for d in sent["decisions"]].count(SELF) == 1


def test_cstp_query_names_an_unknown_peer_and_a_bad_peers_option(url: str) -> None:
    code, _, err = run("query", QUERY, "--peers", f"{SELF},nobody", url=url)
    assert code == 1 and "-32602" in err
    assert "--peers: unknown peer 'nobody'" in err and "cstp peers" in err
    code, _, err = run("query", QUERY, "--peers", " , ", url=url)
    assert code == 2 and "--peers" in err


def test_cstp_similar_and_get_take_peers(url: str) -> None:
    code, out, err = run("similar", "--tag", "kafka", "--peers", SELF, url=url)
    assert code == 0, err
    assert "peer" in next(line for line in out.splitlines() if "┃" in line and "score" in line)
    assert "peers: 1 of 1 answered" in out and "merged by rank" in out
    code, out, err = run("get", "--peer", SELF, "c65c0367", url=url)
    assert code == 0, err
    assert "peer: self" in out.splitlines() and "id: c65c0367" in out.splitlines()
    code, _, err = run("get", "--peer", GONE, "c65c0367", url=url)
    assert code == 1 and "-32003" in err and f"peer service {GONE}" in err


def test_cstp_peers_lists_reachability_circuit_and_model(url: str) -> None:
    code, out, err = run("peers", url=url)
    assert code == 0, err
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if "│" in line}
    cells = {name: [c.strip() for c in row.split("│")[2:-1]] for name, row in rows.items()}
    assert cells[SELF] == ["yes", "closed", f"{MODEL} (256)", "yes"]
    assert cells[GONE][0] == "no" and cells[GONE][2:] == ["unknown", "no"]
    code, out, _ = run("peers", "--json", url=url)
    assert [p["name"] for p in json.loads(out)["peers"]] == [SELF, GONE]


@pytest.mark.parametrize(
    ("command", "option"),
    [("query", "--peers NAME,NAME|*"), ("similar", "--peers NAME,NAME|*"), ("get", "--peer NAME")],
)
def test_the_search_commands_take_peers_and_get_takes_a_peer(command: str, option: str) -> None:
    page = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert page.exit_code == 0 and option in page.output
    assert "cstp.listPeers" in CliRunner().invoke(app, ["peers", "--help"]).output
