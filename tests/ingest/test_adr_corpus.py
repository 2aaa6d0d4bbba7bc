"""Tests over the real ADR corpus in ../shared/data (skipped where that folder is absent)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest

from a2a.ingest import LoadedFile, discover, load_file
from a2a.records import DecisionRecord

DATA_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data"
ADR_DIR = DATA_DIR / "adr"
QUERIES = DATA_DIR / "queries-dev.jsonl"
CORPUS_SIZE = 409
PLACEHOLDERS = (
    "ministryofjustice__cloud-platform/028-Repo-vulnerability-scanning.md",
    "ministryofjustice__cloud-platform/029-Kubernetes-security-config-auditing.md",
    "ministryofjustice__cloud-platform/030-AWS-root-user-security.md",
    "ministryofjustice__cloud-platform/031-Image-vulnerability-scanning.md",
    "nationalarchives__tdr-dev-documentation/0038-egress-control.md",
)


@pytest.fixture(scope="module")
def corpus() -> dict[str, LoadedFile]:
    """Every corpus Markdown file loaded, keyed by source (SOURCES.md is not an ADR)."""
    if not ADR_DIR.is_dir():
        pytest.skip(f"ADR corpus not found at {ADR_DIR} (expected ../shared/data/adr)")
    pairs = [(f, r) for f, r in discover([ADR_DIR]) if f.name != "SOURCES.md"]
    loaded = [load_file(path, root) for path, root in pairs]
    return {item.source: item for item in loaded}


def _record(corpus: dict[str, LoadedFile], source: str) -> DecisionRecord:
    (record,) = corpus[source].records
    return record


def _day(text: str) -> datetime:
    return datetime.combine(date.fromisoformat(text), time.min, tzinfo=UTC)


def test_every_corpus_file_loads_as_exactly_one_record(corpus: dict[str, LoadedFile]) -> None:
    assert len(corpus) == CORPUS_SIZE
    assert {
        source: len(item.records) for source, item in corpus.items() if len(item.records) != 1
    } == {}
    assert all(item.records[0].title.strip() for item in corpus.values())


def test_corpus_ids_are_unique(corpus: dict[str, LoadedFile]) -> None:
    ids = [item.records[0].id for item in corpus.values()]
    assert len(set(ids)) == len(ids) == CORPUS_SIZE


def test_every_corpus_record_has_text_to_embed(corpus: dict[str, LoadedFile]) -> None:
    thin = [s for s, item in corpus.items() if len(item.records[0].embedding_text()) < 80]
    assert thin == []


@pytest.mark.parametrize("source", PLACEHOLDERS)
def test_placeholder_files_still_give_a_titled_record(
    corpus: dict[str, LoadedFile], source: str
) -> None:
    record = _record(corpus, source)
    assert record.title
    assert record.decision is not None
    assert "ADR" in record.decision


@pytest.mark.parametrize(
    ("source", "title", "status", "day"),
    [
        pytest.param(
            "GSA-TTS__FAC/0014-compliance-documentation.md",
            "How to document compliance work",
            "superseded",
            "2022-06-02",
            id="superseded-by-link",
        ),
        pytest.param(
            "GSA-TTS__FAC/0012-migration-plan.md",
            "FAC Migration Plan",
            "decided",
            "2022-05-13",
            id="approved-introduced-compact-date",
        ),
        pytest.param(
            "alphagov__forms/ADR017-use-paper-trail-for-draft-live-or-some-other-solution.md",
            "Use Papertrail for draft/live or some other solution",
            "rejected",
            "2023-03-03",
            id="rejected",
        ),
        pytest.param(
            "alphagov__forms/ADR023-use-uid-in-urls.md",
            "Use UIDs in URLs to replace form-id",
            "decided",
            "2024-01-08",
            id="dd-mm-yy",
        ),
        pytest.param(
            "alphagov__forms/ADR030-use-aws-lambda-to-run-glue-code.md",
            "Use AWS Lambda to run glue code",
            None,
            "2024-05-17",
            id="unfilled-accepted-or-rejected",
        ),
        pytest.param(
            "ministryofjustice__cloud-platform/012-One-cluster-for-dev-staging-prod.md",
            "One cluster for dev/staging/prod",
            "decided",
            "2019-06-01",
            id="dd-mm-yyyy-day-first",
        ),
        pytest.param(
            "ministryofjustice__cloud-platform/001-Use-AWS-hosted-elasticsearch.md",
            "Use AWS hosted Elasticsearch",
            "decided",
            "2018-02-05",
            id="emoji-accepted",
        ),
        pytest.param(
            "ministryofjustice__cloud-platform/034-EKS-Fargate.md",
            "EKS Fargate",
            None,
            "2022-01-21",
            id="emoji-unknown-status",
        ),
        pytest.param(
            "ministryofjustice__modernisation-platform/0002-use-iam-federated-access.md",
            "Use IAM Federated Access",
            "rejected",
            "2020-09-15",
            id="emoji-rejected",
        ),
        pytest.param(
            "adr__madr/0003-provide-own-madr-tools.md",
            "Write Own MADR Tooling",
            "pending",
            None,
            id="madr-front-matter-on-hold-no-date",
        ),
        pytest.param(
            "island-is__handbook/0001-use-nx.md",
            "Use NX",
            "decided",
            "2020-05-03",
            id="dd-mm-yyyy-dots-bullets",
        ),
        pytest.param(
            "thomvaill__log4brains/20200926-use-the-adr-number-as-its-unique-id.md",
            "Use the ADR number as its unique ID",
            "superseded",
            "2020-09-26",
            id="log4brains-superseded-bullet",
        ),
        pytest.param(
            "arachne-framework__architecture/adr-002-configuration.md",
            "Configuration",
            "proposed",
            None,
            id="arachne-missing-date",
        ),
        pytest.param(
            "nationalarchives__tdr-dev-documentation/0002-versioning-and-deployments.md",
            "Versioning and deployments",
            None,
            "2020-02-21",
            id="bold-date-no-status",
        ),
        pytest.param(
            "nationalarchives__tdr-dev-documentation/0033-dta-review-user-permissions.md",
            "User permissions for DTA Review feature",
            None,
            None,
            id="h2-title-no-date",
        ),
        pytest.param(
            "theupdateframework__python-tuf/0001-python-version-3-6-plus.md",
            "Default to Python 3.6 or newer for new development",
            "decided",
            "2020-10-20",
            id="madr-asterisk-bullets",
        ),
        pytest.param(
            "alphagov__content-publisher/0006-tagging-governments.md",
            "Tagging Content to Governments",
            "superseded",
            "2018-12-12",
            id="status-after-decision",
        ),
        pytest.param(
            "alphagov__govuk-infrastructure/0007-use-fluentbit-elasticsearch-and-kibana-for-application-logs.md",
            "Use Fluent Bit, Elasticsearch and Kibana for application logs",
            "deprecated",
            "2021-08-16",
            id="deprecated-after-html-comments",
        ),
        pytest.param(
            "cisagov__manage.get.gov/0023-use-geventconnpool.md",
            "Use geventconnpool library for Connection Pooling",
            "decided",
            None,
            id="impossible-date-2023-13-10",
        ),
        pytest.param(
            "alphagov__govuk-aws/0003-aws-networking-outline.md",
            "Networking Outline",
            None,
            "2017-06-30",
            id="partly-superseded",
        ),
    ],
)
def test_spot_checked_files_parse_as_written(
    corpus: dict[str, LoadedFile], source: str, title: str, status: str | None, day: str | None
) -> None:
    record = _record(corpus, source)
    assert (record.title, record.status, record.date) == (title, status, day and _day(day))


def test_unknown_statuses_are_warned_about(corpus: dict[str, LoadedFile]) -> None:
    item = corpus["ministryofjustice__cloud-platform/034-EKS-Fargate.md"]
    assert item.warnings == ["status '🤔 Incomplete' not in vocabulary; stored as null"]


def _filtered_queries() -> list[dict[str, Any]]:
    if not QUERIES.is_file():
        pytest.skip(f"labelled queries not found at {QUERIES} (expected ../shared/data)")
    lines = QUERIES.read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line) for line in lines if line.strip()]
    return [query for query in queries if query.get("kind") == "filtered"]


def _filter_failures(record: DecisionRecord, filters: dict[str, Any]) -> list[str]:
    failures: list[str] = []
    if "status" in filters and record.status not in filters["status"]:
        failures.append(f"status {record.status} not in {filters['status']}")
    if "dateAfter" in filters and (record.date is None or record.date < _day(filters["dateAfter"])):
        failures.append(f"date {record.date} before {filters['dateAfter']}")
    if "dateBefore" in filters:
        end = _day(filters["dateBefore"]) + timedelta(days=1)
        if record.date is None or record.date >= end:
            failures.append(f"date {record.date} after {filters['dateBefore']}")
    return failures


def test_relevant_files_of_filtered_queries_satisfy_their_filters(
    corpus: dict[str, LoadedFile],
) -> None:
    queries = _filtered_queries()
    assert queries, "queries-dev.jsonl has no filtered queries"
    failures = {
        f"{query['query'][:40]}… -> {source}": problems
        for query in queries
        for source in query["relevant"]
        if (problems := _filter_failures(_record(corpus, source), query["filters"]))
    }
    assert failures == {}
