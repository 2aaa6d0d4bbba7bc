"""Indexing throughput and cstp.queryDecisions latency, measured in process (no HTTP).

One run:

1. generates N synthetic decision records, deterministically from a seed;
2. indexes them through `Indexer.write` into a fresh embedded Chroma folder, timing the
   embedding and the Chroma calls separately;
3. times `QueryService.query_decisions` for three filter cases (none, broad, narrow);
4. times the same Chroma query made directly on the collection (same query vectors, same
   `where`, same `n_results`), plus the embedding of one query alone;
5. prints one table and, with `--out`, writes the numbers as JSON.

Usage:

    python bench/query_bench.py [--n 10000] [--model NAME] [--queries 200] [--seed 7]
                                [--out FILE.json]

See bench/README.md for how to read the output.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any, cast

import anyio

from a2a.embeddings import DEFAULT_MODEL, MODELS, Embedder, load_embedder
from a2a.ingest.indexer import Indexer, IndexSummary
from a2a.query.params import QueryDecisionsParams
from a2a.query.service import QueryService
from a2a.records import DecisionRecord, Reason, Stakes, Status
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import to_where

#: Extra results the raw-Chroma floor asks for beyond LIMIT, as the service's Chroma-backed
#: ranking once did to break ties by id (the search index now breaks them itself).
TIE_MARGIN = 10
#: Results asked for per query, as a client would (the floor fetches LIMIT + TIE_MARGIN).
LIMIT = 10
#: Untimed queries per case before measuring (first touches load the index into memory).
WARMUP_QUERIES = 5
#: Records embedded up front to estimate how long indexing will take.
ESTIMATE_SAMPLE = 64

# -- vocabularies ------------------------------------------------------------------------

TOPICS = (
    "the billing ledger",
    "user authentication",
    "search indexing",
    "event ingestion",
    "the mobile release pipeline",
    "customer notifications",
    "the analytics warehouse",
    "feature flags",
    "service discovery",
    "image processing",
    "the payments gateway",
    "audit logging",
    "the recommendation engine",
    "tenant isolation",
    "the public REST API",
    "background job scheduling",
    "session storage",
    "data retention",
    "on-call alert routing",
    "the onboarding flow",
    "the CI build cache",
    "secrets management",
    "rate limiting",
    "the admin dashboard",
)
TECHNOLOGIES = (
    "PostgreSQL",
    "Redis",
    "Kafka",
    "Kubernetes",
    "Terraform",
    "gRPC",
    "GraphQL",
    "ClickHouse",
    "S3",
    "DynamoDB",
    "RabbitMQ",
    "Elasticsearch",
    "OpenTelemetry",
    "Envoy",
    "SQLite",
    "Celery",
    "Temporal",
    "Rust",
    "TypeScript",
    "Django",
    "FastAPI",
    "React Native",
    "Snowflake",
    "Vault",
    "Nginx",
    "Bazel",
)
VERBS = (
    "Adopt",
    "Migrate to",
    "Standardize on",
    "Pilot",
    "Replace the in-house tool with",
    "Deprecate",
    "Keep",
    "Introduce",
    "Roll back from",
    "Consolidate on",
)
DRIVERS = (
    "p99 latency above the SLO",
    "rising infrastructure cost",
    "heavy on-call load",
    "an upcoming SOC 2 audit",
    "limited team familiarity",
    "growth in write volume",
    "a vendor end-of-life notice",
    "slow local development",
    "frequent schema changes",
    "cross-region replication needs",
    "a flaky deploy process",
    "customer-reported data loss",
)
CONSTRAINTS = (
    "no extra headcount this quarter",
    "a hard deadline before the holiday freeze",
    "staying on the existing cloud account",
    "zero downtime during the migration",
    "a fixed budget",
    "compatibility with mobile clients already shipped",
    "data residency in the EU",
)
REASON_TEMPLATES = (
    ("empirical", "Benchmarks showed {tech} handling {topic} with room to spare."),
    ("pattern", "Other teams already run {tech} in production, so operating it is known work."),
    ("constraint", "The alternative, {alt}, could not meet {constraint}."),
    ("analysis", "It removes {driver} as a recurring problem."),
    ("empirical", "A two-week spike on {topic} went without surprises."),
    ("authority", "The platform group recommends {tech} for new work."),
    ("analogy", "The last migration of this size went well with a similar plan."),
    ("elimination", "{alt} was ruled out after the load test."),
    ("intuition", "The team is confident {tech} keeps {topic} simple to change."),
)
EXTRA_TAGS = (
    "migration",
    "cost",
    "reliability",
    "security",
    "latency",
    "compliance",
    "dx",
    "scalability",
    "vendor",
    "q3-planning",
    "tech-debt",
    "incident-follow-up",
)
QUERY_TEMPLATES = (
    "why did we choose {tech} for {topic}",
    "{topic} and {driver}",
    "should we move {topic} away from {tech}",
    "decisions about {tech} versus {alt}",
    "how did we handle {driver}",
    "{category} decisions made under {constraint}",
)

#: Value -> relative weight: a realistic skew, not a uniform spread.
CATEGORIES = {
    "architecture": 20,
    "infrastructure": 18,
    "tooling": 15,
    "data": 13,
    "process": 12,
    "security": 9,
    "performance": 8,
    "product": 5,
}
STAKES_WEIGHTS = {"low": 35, "medium": 40, "high": 20, "critical": 5}
STATUS_WEIGHTS = {
    "decided": 45,
    "reviewed": 15,
    "proposed": 10,
    "pending": 8,
    "superseded": 10,
    "deprecated": 5,
    "rejected": 7,
}
OUTCOME_WEIGHTS = {"success": 55, "partial": 25, "failure": 20}
#: Statuses whose records may carry an outcome.
SETTLED = frozenset({"decided", "reviewed", "superseded", "deprecated"})

FIRST_DATE = int(datetime(2023, 1, 1, tzinfo=UTC).timestamp())
LAST_DATE = int(datetime(2027, 1, 1, tzinfo=UTC).timestamp()) - 1


# -- synthetic records -------------------------------------------------------------------


def pick(rng: random.Random, weights: dict[str, int]) -> str:
    """One key of `weights`, drawn with those relative weights."""
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def slug(text: str) -> str:
    """`the billing ledger` -> `billing-ledger`."""
    return text.removeprefix("the ").lower().replace(" ", "-")


def fill(rng: random.Random, category: str) -> dict[str, str]:
    """Template values for one record or query: topic, two technologies, driver, constraint."""
    tech, alt = rng.sample(TECHNOLOGIES, 2)
    return {
        "topic": rng.choice(TOPICS),
        "tech": tech,
        "alt": alt,
        "category": category,
        "driver": rng.choice(DRIVERS),
        "constraint": rng.choice(CONSTRAINTS),
        "verb": rng.choice(VERBS),
    }


def make_reasons(rng: random.Random, words: dict[str, str]) -> list[Reason]:
    """One to three distinct reasons."""
    chosen = rng.sample(REASON_TEMPLATES, rng.randint(1, 3))
    return [Reason(type=kind, text=text.format(**words)) for kind, text in chosen]


def make_tags(rng: random.Random, words: dict[str, str]) -> list[str]:
    """Two to four tags: the technology and the category, then topic or generic ones."""
    tags = [slug(words["tech"]), words["category"]]
    extras = [slug(words["topic"]), *rng.sample(EXTRA_TAGS, 2)]
    return tags + extras[: rng.randint(0, 2)]


def make_record(rng: random.Random, index: int) -> DecisionRecord:
    """One plausible decision; every field drawn from `rng`."""
    category = pick(rng, CATEGORIES)
    words = fill(rng, category)
    status = pick(rng, STATUS_WEIGHTS)
    settled = status in SETTLED and rng.random() < 0.6
    context = (
        "{topic} is suffering from {driver}. We compared {tech} with {alt} under {constraint}."
    ).format(**words)
    return DecisionRecord(
        id=f"bench-{index:06d}",
        title="{verb} {tech} for {topic}".format(**words),
        category=category,
        confidence=round(rng.random(), 3),
        stakes=cast(Stakes, pick(rng, STAKES_WEIGHTS)),
        status=cast(Status, status),
        outcome=pick(rng, OUTCOME_WEIGHTS) if settled else None,
        date=datetime.fromtimestamp(rng.randint(FIRST_DATE, LAST_DATE), tz=UTC),
        context=context[0].upper() + context[1:],
        decision="{verb} {tech} for {topic}; {alt} stays the fallback.".format(**words),
        reasons=make_reasons(rng, words),
        tags=make_tags(rng, words),
        source=f"decisions/{category}/bench-{index:06d}.yaml",
    )


def generate_records(n: int, seed: int) -> list[DecisionRecord]:
    """`n` records, the same for the same seed."""
    rng = random.Random(seed)
    return [make_record(rng, i) for i in range(n)]


def generate_queries(count: int, seed: int) -> list[str]:
    """`count` query texts, the same for the same seed (independent of the records)."""
    rng = random.Random(f"queries-{seed}")
    texts = []
    for _ in range(count):
        words = fill(rng, pick(rng, CATEGORIES))
        texts.append(rng.choice(QUERY_TEMPLATES).format(**words))
    return texts


# -- timing helpers ----------------------------------------------------------------------


@dataclass
class Stopwatch:
    """Accumulated wall time over any number of timed calls."""

    seconds: float = 0.0
    calls: int = 0

    @contextmanager
    def measure(self) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


class TimedEmbedder:
    """An Embedder that adds the time spent in `embed_documents` to a stopwatch."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.documents = Stopwatch()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        with self.documents.measure():
            return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


class TimedStore(ChromaDecisionStore):
    """The real store, with its two indexing calls timed (metadata building included)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.upserts = Stopwatch()
        self.lookups = Stopwatch()

    def upsert(
        self,
        records: Sequence[DecisionRecord],
        embeddings: Sequence[Sequence[float]],
    ) -> None:
        with self.upserts.measure():
            super().upsert(records, embeddings)

    def content_hashes(self, ids: Sequence[str]) -> dict[str, str]:
        with self.lookups.measure():
            return super().content_hashes(ids)


class Progress:
    """Indexer progress callback: a line on stderr at every tenth of the records."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.step = max(1, total // 10)
        self.started = time.perf_counter()

    def __call__(self, count: int) -> None:
        before, self.done = self.done, self.done + count
        if before // self.step != self.done // self.step or self.done == self.total:
            rate = self.done / max(time.perf_counter() - self.started, 1e-9)
            print(
                f"  indexed {self.done:>7,}/{self.total:,} ({rate:,.0f} records/s)",
                file=sys.stderr,
                flush=True,
            )


def percentile(values: Sequence[float], q: int) -> float:
    """The q-th percentile (1..99), interpolated between samples."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


# -- indexing ----------------------------------------------------------------------------


@dataclass
class IndexReport:
    """Where indexing time went, in seconds."""

    records: int
    total_s: float
    embed_s: float
    upsert_s: float
    lookup_s: float

    @property
    def other_s(self) -> float:
        """Indexer work outside the timed calls: content hashing, batching."""
        return max(self.total_s - self.embed_s - self.upsert_s - self.lookup_s, 0.0)

    def rate(self, seconds: float) -> float:
        """Records per second if `seconds` were all the time spent."""
        return self.records / seconds if seconds > 0 else float("inf")


def estimate_embedding(embedder: Embedder, records: Sequence[DecisionRecord]) -> float:
    """Records/s of `embed_documents` on a small sample, after a warm-up call."""
    texts = [r.embedding_text() for r in records[:ESTIMATE_SAMPLE]]
    embedder.embed_documents(texts[:4])  # first call pays one-off setup
    start = time.perf_counter()
    embedder.embed_documents(texts)
    return len(texts) / max(time.perf_counter() - start, 1e-9)


def index_records(
    store: TimedStore, embedder: Embedder, records: Sequence[DecisionRecord]
) -> IndexReport:
    """Write `records` through Indexer.write, with the embedding and Chroma calls timed."""
    timed = TimedEmbedder(embedder)
    summary = IndexSummary()
    start = time.perf_counter()
    Indexer(store, timed).write(records, summary, Progress(len(records)))
    total = time.perf_counter() - start
    if summary.new != len(records):
        raise RuntimeError(f"expected {len(records)} new records, indexer reports {summary}")
    return IndexReport(
        records=len(records),
        total_s=total,
        embed_s=timed.documents.seconds,
        upsert_s=store.upserts.seconds,
        lookup_s=store.lookups.seconds,
    )


def index_lines(report: IndexReport) -> list[str]:
    """Human-readable indexing summary."""

    def share(seconds: float) -> str:
        return f"{seconds:8.1f} s ({100 * seconds / report.total_s:5.1f}%)"

    return [
        f"indexing: {report.records:,} records in {report.total_s:.1f} s = "
        f"{report.rate(report.total_s):,.0f} records/s overall",
        f"  embedding (embed_documents) {share(report.embed_s)}  "
        f"-> {report.rate(report.embed_s):,.0f} records/s alone",
        f"  Chroma upsert               {share(report.upsert_s)}  "
        f"-> {report.rate(report.upsert_s):,.0f} records/s alone",
        f"  Chroma content-hash lookups {share(report.lookup_s)}",
        f"  other (hashing, batching)   {share(report.other_s)}",
    ]


# -- queries -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A filter case: its wire-form filters (camelCase), or None for no filter."""

    name: str
    filters: dict[str, Any] | None


CASES = (
    Case("none", None),
    Case("broad", {"status": ["decided", "reviewed"], "minConfidence": 0.2}),
    Case(
        "narrow",
        {
            "category": "architecture",
            "stakes": ["critical"],
            "dateAfter": "2025-04-01",
            "dateBefore": "2025-06-30",
        },
    ),
)


@dataclass
class CaseResult:
    """Latencies (ms) and result counts of one case, service and raw Chroma side by side."""

    case: str
    where: dict[str, Any] | None
    matching_records: int
    service_p50_ms: float
    service_p99_ms: float
    raw_p50_ms: float
    raw_p99_ms: float
    service_mean_results: float
    raw_mean_hits: float

    @property
    def ratio(self) -> float:
        """Service p50 over raw Chroma p50."""
        return self.service_p50_ms / self.raw_p50_ms


def params_for(case: Case, text: str) -> QueryDecisionsParams:
    """Params exactly as the JSON-RPC layer would validate them from the wire."""
    wire: dict[str, Any] = {"query": text, "limit": LIMIT}
    if case.filters is not None:
        wire["filters"] = case.filters
    return QueryDecisionsParams.model_validate(wire)


def embed_queries(
    embedder: Embedder, texts: Sequence[str]
) -> tuple[list[list[float]], list[float]]:
    """Each query's vector and how long embedding it alone took (ms)."""
    vectors, times = [], []
    for text in texts:
        start = time.perf_counter()
        vectors.append(embedder.embed_query(text))
        times.append((time.perf_counter() - start) * 1000)
    return vectors, times


def raw_query(collection: Any, vector: list[float], where: dict[str, Any] | None) -> int:
    """The Chroma call the store makes, with nothing around it; returns the hit count."""
    result = collection.query(
        query_embeddings=[vector],
        n_results=LIMIT + TIE_MARGIN,
        where=where,
        include=["metadatas", "distances"],
    )
    return len(result["ids"][0])


def count_matching(collection: Any, where: dict[str, Any] | None) -> int:
    """Records in the collection that pass `where`."""
    if where is None:
        return int(collection.count())
    return len(collection.get(where=where, include=[])["ids"])


async def measure_case(
    service: QueryService,
    collection: Any,
    case: Case,
    texts: Sequence[str],
    vectors: Sequence[list[float]],
) -> CaseResult:
    """Alternate service and raw queries, one text at a time, after an untimed warm-up."""
    params = [params_for(case, text) for text in texts]
    where = to_where(params[0].filters)
    for i in range(min(WARMUP_QUERIES, len(params))):
        await service.query_decisions(params[i])
        raw_query(collection, vectors[i], where)
    service_ms, raw_ms, results, hits = [], [], [], []
    for param, vector in zip(params, vectors, strict=True):
        start = time.perf_counter()
        answer = await service.query_decisions(param)
        service_ms.append((time.perf_counter() - start) * 1000)
        results.append(len(answer.decisions))
        start = time.perf_counter()
        hits.append(raw_query(collection, vector, where))
        raw_ms.append((time.perf_counter() - start) * 1000)
    return CaseResult(
        case=case.name,
        where=where,
        matching_records=count_matching(collection, where),
        service_p50_ms=percentile(service_ms, 50),
        service_p99_ms=percentile(service_ms, 99),
        raw_p50_ms=percentile(raw_ms, 50),
        raw_p99_ms=percentile(raw_ms, 99),
        service_mean_results=statistics.fmean(results),
        raw_mean_hits=statistics.fmean(hits),
    )


async def measure_queries(
    store: ChromaDecisionStore,
    embedder: Embedder,
    texts: Sequence[str],
    vectors: Sequence[list[float]],
) -> list[CaseResult]:
    """Every case through QueryService and straight on the store's own Chroma collection.

    The raw side reuses the collection object the service's store opened (a private
    method): same client, same in-memory index, same settings. A second PersistentClient
    on the folder would share that very system anyway, as Chroma caches one per path in a
    process, so this is the same thing without pretending otherwise.
    """
    service = QueryService(AsyncStore(store, timeout_seconds=60.0), embedder, agent_id="bench")
    collection = store._get_collection(create=False)
    return [await measure_case(service, collection, c, texts, vectors) for c in CASES]


# -- report ------------------------------------------------------------------------------


def table(results: Sequence[CaseResult], n: int) -> str:
    """Aligned plain-text table, one row per case."""
    header = (
        "case",
        "service p50 ms",
        "service p99 ms",
        "raw Chroma p50 ms",
        "raw Chroma p99 ms",
        "service/raw (p50)",
        "mean results",
        "matching records",
    )
    rows = [header] + [
        (
            r.case,
            f"{r.service_p50_ms:.2f}",
            f"{r.service_p99_ms:.2f}",
            f"{r.raw_p50_ms:.2f}",
            f"{r.raw_p99_ms:.2f}",
            f"{r.ratio:.2f}x",
            f"{r.service_mean_results:.2f}",
            f"{r.matching_records:,} ({100 * r.matching_records / n:.2f}%)",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def environment(args: argparse.Namespace) -> dict[str, Any]:
    """The run's settings and the machine it ran on, for the JSON output."""
    return {
        "n": args.n,
        "model": args.model,
        "queries": args.queries,
        "seed": args.seed,
        "limit": LIMIT,
        "n_results": LIMIT + TIE_MARGIN,
        "python": platform.python_version(),
        "chromadb": version("chromadb"),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def write_json(
    path: Path,
    env: dict[str, Any],
    report: IndexReport,
    query_embed_ms: Sequence[float],
    results: Sequence[CaseResult],
) -> None:
    """All numbers of the run as one JSON document."""
    document = {
        "environment": env,
        "indexing": {
            **asdict(report),
            "other_s": report.other_s,
            "records_per_s": report.rate(report.total_s),
        },
        "query_embedding_ms": {
            "p50": percentile(query_embed_ms, 50),
            "p99": percentile(query_embed_ms, 99),
        },
        "cases": [{**asdict(r), "service_raw_ratio_p50": r.ratio} for r in results],
        "peak_rss_mib": peak_rss_mib(),
    }
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


# -- main --------------------------------------------------------------------------------


@dataclass
class Run:
    """Everything one run measured."""

    report: IndexReport
    query_embed_ms: list[float] = field(default_factory=list)
    results: list[CaseResult] = field(default_factory=list)


def announce_estimate(
    embedder: Embedder, records: Sequence[DecisionRecord], model_given: bool
) -> None:
    """Print how long embedding all records should take, from a small sample."""
    rate = estimate_embedding(embedder, records)
    seconds = len(records) / rate
    print(
        f"estimate: embedding {len(records):,} records takes ~{seconds / 60:.1f} min "
        f"({rate:,.0f} records/s on a {min(len(records), ESTIMATE_SAMPLE)}-record sample), "
        "plus Chroma time",
        flush=True,
    )
    if not model_given and seconds > 60:
        print("  (for a quick run: --model wordllama-l2-supercat-256)", flush=True)


def run(args: argparse.Namespace, model_given: bool) -> Run:
    """Generate, index into a temp folder, query; the folder is removed afterwards."""
    records = generate_records(args.n, args.seed)
    texts = generate_queries(args.queries, args.seed)
    embedder = load_embedder(args.model)
    announce_estimate(embedder, records, model_given)
    with tempfile.TemporaryDirectory(prefix="cstp-bench-", ignore_cleanup_errors=True) as tmp:
        settings: dict[str, Any] = {
            "data_dir": Path(tmp) / "chroma",
            "collection": "bench",
            "embedding_model": embedder.name,
        }
        indexing_store = TimedStore(**settings)
        report = index_records(indexing_store, embedder, records)
        indexing_store.close()
        print("\n".join(index_lines(report)), flush=True)
        vectors, embed_ms = embed_queries(embedder, texts)
        query_store = ChromaDecisionStore(**settings)
        results = anyio.run(measure_queries, query_store, embedder, texts, vectors)
        query_store.close()
    return Run(report=report, query_embed_ms=embed_ms, results=results)


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, bool]:
    """The options, and whether --model was given explicitly."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="records to index (10000)")
    parser.add_argument(
        "--model",
        choices=sorted(MODELS),
        default=None,
        help=f"embedding model (default {DEFAULT_MODEL})",
    )
    parser.add_argument("--queries", type=int, default=200, help="queries per case (200)")
    parser.add_argument("--seed", type=int, default=7, help="seed for records and queries (7)")
    parser.add_argument("--out", type=Path, default=None, help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    if args.n < 1 or args.queries < 1:
        parser.error("--n and --queries must be at least 1")
    model_given = args.model is not None
    args.model = args.model or DEFAULT_MODEL
    return args, model_given


def main(argv: Sequence[str] | None = None) -> int:
    args, model_given = parse_args(argv)
    env = environment(args)
    print(
        f"cstp query bench: n={args.n:,} model={args.model} queries={args.queries} "
        f"seed={args.seed} limit={LIMIT} n_results={LIMIT + TIE_MARGIN} "
        f"cpus={env['cpu_count']} chromadb={env['chromadb']}",
        flush=True,
    )
    result = run(args, model_given)
    print()
    print(table(result.results, args.n))
    print(
        f"\nquery embedding alone ({args.model}): "
        f"p50 {percentile(result.query_embed_ms, 50):.2f} ms, "
        f"p99 {percentile(result.query_embed_ms, 99):.2f} ms"
    )
    print(f"peak RSS: {peak_rss_mib():,.0f} MiB")
    if args.out is not None:
        write_json(args.out, env, result.report, result.query_embed_ms, result.results)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
