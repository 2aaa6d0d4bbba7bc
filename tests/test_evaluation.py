"""IR metrics of the evaluation harness, and `cstp eval` end to end on a small corpus."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from a2a.cli.main import app as cli_app
from a2a.evaluation.metrics import ndcg, recall_at, reciprocal_rank
from a2a.evaluation.queries import load_queries
from tests.conftest import REPO
from tests.servers import cstp

RANKED = ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("relevant", "r1", "r5", "rr", "gain"),
    [
        (["a"], 1.0, 1.0, 1.0, 1.0),
        (["c"], 0.0, 1.0, 1 / 3, 1 / math.log2(4)),
        (["c", "a"], 1.0, 1.0, 1.0, (1 + 1 / 2) / (1 + 1 / math.log2(3))),
        (["z"], 0.0, 0.0, 0.0, 0.0),
    ],
    ids=["first", "third", "two-relevant", "none"],
)
def test_metrics_of_one_ranked_list(
    relevant: list[str], r1: float, r5: float, rr: float, gain: float
) -> None:
    assert recall_at(RANKED, relevant, 1) == r1
    assert recall_at(RANKED, relevant, 5) == r5
    assert reciprocal_rank(RANKED, relevant) == pytest.approx(rr)
    assert ndcg(RANKED, relevant) == pytest.approx(gain)


def test_rank_beyond_the_cutoff_scores_zero() -> None:
    ranked = [str(i) for i in range(20)]
    assert reciprocal_rank(ranked, ["15"]) == 0.0 and ndcg(ranked, ["15"]) == 0.0


def test_bad_queries_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "x", "relevant": ["a"]}\n{"query": "no relevant"}\n')
    with pytest.raises(ValueError, match=r"q\.jsonl:2"):
        load_queries(path)


def test_eval_command_scores_every_mode_on_labelled_queries(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    lines = [
        {"query": "Kafka consumer group rebalancing", "relevant": ["incidents.yaml"]},
        {"query": "hardware security keys for staff logins", "relevant": ["security.yaml"]},
        {
            "query": "keyboard and screen reader payment page",
            "relevant": ["frontend.yaml"],
            "filters": {"status": ["decided", "reviewed"]},
        },
    ]
    queries.write_text("\n".join(json.dumps(line) for line in lines))
    off_topic = tmp_path / "off-topic.txt"
    off_topic.write_text("# noise\noffice kitchen paint\nsourdough starter feeding\n")
    report_file = tmp_path / "report.json"
    result = cstp(
        "eval",
        str(REPO / "examples" / "decisions"),
        str(queries),
        "--json",
        "--model",
        "wordllama-l2-supercat-256",
        "--folds",
        "3",
        "--repeats",
        "2",
        "--off-topic",
        str(off_topic),
        "--json-out",
        str(report_file),
        env={},
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert json.loads(report_file.read_text()) == report
    assert report["records"] == 48 and report["queries"] == 3
    assert [m["mode"] for m in report["modes"]] == ["semantic", "keyword", "hybrid"]
    for mode in report["modes"]:
        assert 0 <= mode["mrr@10"] <= mode["recall@10"] <= 1
        # Each file holds six records, all relevant: a hit in the top 10 is certain.
        assert mode["recall@10"] == 1.0
        assert set(mode["mrr@10_by_kind"]) == {"unlabelled"}
    methods = {m["method"]: m for m in report["fusion"]["methods"]}
    assert {"semantic", "keyword", "rrf", "minmax", "dbsf", "tmm"} <= set(methods)
    assert report["fusion"]["winner"] in methods
    for method in methods.values():
        assert 0 <= method["cv_mrr@10"] <= 1
        # 3 folds x 2 shuffles: six choices, each made on the other folds.
        assert sum(method["chosen_in_folds"].values()) == 6
    threshold = report["distance_threshold"]
    assert len(threshold["off_topic"]) == 2 and 0 <= threshold["threshold"] <= 2


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--folds", "1"], "--folds"), (["--folds", "4"], "--folds"), (["--modes", "fuzzy"], "modes")],
    ids=["one-fold", "more-folds-than-queries", "unknown-mode"],
)
def test_eval_command_refuses_bad_options_with_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"query": "x", "relevant": ["a"]}\n' * 3)
    # In this process: the options are refused before anything is indexed or loaded, and a
    # `cstp` process would spend its time importing (the runs above start one).
    result = CliRunner().invoke(cli_app, ["eval", str(tmp_path), str(queries), *args])
    assert result.exit_code == 2 and message in result.stderr


def test_eval_command_prints_each_query_file_with_the_fold_spread(tmp_path: Path) -> None:
    first, second = tmp_path / "dev.jsonl", tmp_path / "dev2.jsonl"
    first.write_text(
        "\n".join(
            json.dumps({"query": q, "relevant": [r], "kind": "paraphrase"})
            for q, r in [
                ("Kafka consumer group rebalancing", "incidents.yaml"),
                ("hardware security keys for staff logins", "security.yaml"),
                ("keyboard and screen reader payment page", "frontend.yaml"),
            ]
        )
    )
    second.write_text(
        "\n".join(
            json.dumps({"query": q, "relevant": [r], "kind": "typo"})
            for q, r in [
                ("kafak consumer rebalance", "incidents.yaml"),
                ("hardwear security keys", "security.yaml"),
                ("screen readr payments", "frontend.yaml"),
            ]
        )
    )
    common = ["--model", "wordllama-l2-supercat-256", "--folds", "3", "--repeats", "2"]
    corpus = str(REPO / "examples" / "decisions")
    text = cstp("eval", corpus, str(first), str(second), *common, env={})
    assert text.returncode == 0, text.stderr
    assert "== dev.jsonl ==" in text.stdout and "== dev2.jsonl ==" in text.stdout
    assert text.stdout.count("fold min  median    max") == 2
    as_json = cstp("eval", corpus, str(first), str(second), "--json", *common, env={})
    sets = json.loads(as_json.stdout)["sets"]
    assert [s["set"] for s in sets] == ["dev.jsonl", "dev2.jsonl"]
    for report in sets:
        for method in report["fusion"]["methods"]:
            assert method["cv_fold_min"] <= method["cv_fold_median"] <= method["cv_fold_max"]
            assert method["cv_fold_min"] <= method["cv_mrr@10"] <= method["cv_fold_max"]
