"""The service's Prometheus metrics, in a registry of its own (one per app)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable

import anyio
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from a2a.errors import EmbeddingModelMismatch, Saturated, StoreUnavailable
from a2a.rpc import protocol
from a2a.rpc.pipeline import Outcome

#: Prometheus' text exposition format, the Content-Type of GET /metrics.
CONTENT_TYPE = CONTENT_TYPE_LATEST
#: The `method` label of a call whose method is not served (or unreadable): client-chosen
#: names must not create label values without bound.
OTHER_METHOD = "other"
#: Histogram buckets of /cstp request wall time, in seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
#: Histogram buckets of queries per model call (a2a.embeddings.batching.MAX_BATCH is 16).
BATCH_BUCKETS = (1, 2, 4, 8, 16)


class Metrics:
    """Counters, histogram and gauges of one app.

    A fresh CollectorRegistry per instance (not prometheus_client's global one), so several
    apps in one process, as in the tests, never share or clash over series.
    """

    def __init__(self, served: Collection[str] = ()) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.served = frozenset(served)
        self.calls = Counter(
            "cstp_rpc_calls",
            "JSON-RPC calls answered, by method and outcome code ('ok' or the error code).",
            ["method", "code"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "cstp_rpc_request_seconds",
            "Wall time of HTTP requests to /cstp, from first byte in to last byte out (seconds).",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "cstp_rpc_requests_in_flight",
            "HTTP requests to /cstp being served right now.",
            registry=self.registry,
        )
        self.rate_limited = Counter(
            "cstp_rate_limited",
            "Calls refused by a rate limit (-32002), by method.",
            ["method"],
            registry=self.registry,
        )
        self.store_errors = Counter(
            "cstp_store_errors",
            "Chroma calls that failed, by kind: 'timeout' or 'failure' (any other error).",
            ["kind"],
            registry=self.registry,
        )
        self.query_batch_size = Histogram(
            "cstp_query_embedding_batch_size",
            "Queries embedded per model call (a2a.embeddings.batching; batchable models only).",
            buckets=BATCH_BUCKETS,
            registry=self.registry,
        )
        self.decisions = Gauge(
            "cstp_decisions",
            "Decisions in the store, every tenant's together, read when /metrics is scraped "
            "(-1 before the first read).",
            registry=self.registry,
        )
        self.store_up = Gauge(
            "cstp_store_up",
            "1 when Chroma answered the last scrape's count, else 0.",
            registry=self.registry,
        )
        self.stale_since = Gauge(
            "cstp_stale_reads_since",
            "While reads are answered stale (Chroma unreachable): epoch seconds of the last "
            "successful check with Chroma; 0 when reads are fresh.",
            registry=self.registry,
        )
        self.tenants_loaded_gauge = Gauge(
            "cstp_index_tenants_loaded",
            "Tenants whose search index is loaded in this replica (CONTRACT.md, Tenants).",
            registry=self.registry,
        )
        self.evictions = Counter(
            "cstp_index_evictions",
            "Tenants' search indexes evicted past CSTP_INDEX_MEMORY_MIB (least recently used).",
            registry=self.registry,
        )
        self.org_searches = Counter(
            "cstp_org_searches",
            'Org-level queryDecisions calls (tenant "*") by how they searched: `union`, one '
            "walk of a graph over the tenants together; `tenants`, each tenant's own search.",
            ["path"],
            registry=self.registry,
        )
        self.peer_calls = Counter(
            "cstp_peer_calls",
            "Calls to peer services (CONTRACT.md, Federation), by peer and status:"
            " `successful`, `failed` or `skipped` (circuit open).",
            ["peer", "status"],
            registry=self.registry,
        )
        self.peer_seconds = Histogram(
            "cstp_peer_seconds",
            "Wall time of calls to peer services, by peer (seconds; skipped calls not timed).",
            ["peer"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.guardrail_checks = Counter(
            "cstp_guardrail_checks",
            "cstp.checkGuardrails calls answered, by verdict: `allow`, `warn` or `block`.",
            ["verdict"],
            registry=self.registry,
        )
        self.decisions.set(-1)
        # The labelled children of `calls`, by (method, code): `labels()` validates and locks
        # on every call, and both labels come from small closed sets (served methods, codes).
        self._call_children: dict[tuple[str, str], Counter] = {}

    def method_label(self, method: str | None) -> str:
        """The `method` label: the name of a served method, else `other`."""
        return method if method is not None and method in self.served else OTHER_METHOD

    def count_calls(self, outcomes: Iterable[Outcome]) -> None:
        """One increment per call in `cstp_rpc_calls_total`, and per -32002 in rate_limited."""
        for outcome in outcomes:
            method = self.method_label(outcome.method)
            key = (method, code_label(outcome.code))
            child = self._call_children.get(key)
            if child is None:
                child = self._call_children[key] = self.calls.labels(*key)
            child.inc()
            if outcome.code == protocol.RATE_LIMITED:
                self.rate_limited.labels(method).inc()

    def tenant_evicted(self) -> None:
        """Count one tenant's index evicted (a2a.app.tenants)."""
        self.evictions.inc()

    def tenants_loaded(self, count: int) -> None:
        """Set how many tenants' indexes are loaded now."""
        self.tenants_loaded_gauge.set(count)

    def org_searched(self, path: str) -> None:
        """Count one org-level query answered by `path` (`union` or `tenants`; a2a.app.org)."""
        self.org_searches.labels(path).inc()

    def peer_called(self, peer: str, status: str, seconds: float | None) -> None:
        """Count one call to `peer` (a configured name) ending `status`, and time it unless
        it was skipped (`seconds` None; a2a.federation)."""
        self.peer_calls.labels(peer, status).inc()
        if seconds is not None:
            self.peer_seconds.labels(peer).observe(seconds)

    def guardrails_checked(self, verdict: str) -> None:
        """Count one cstp.checkGuardrails answered with `verdict` (a2a.app.guard_methods)."""
        self.guardrail_checks.labels(verdict).inc()

    def store_failed(self, kind: str) -> None:
        """Count one failed Chroma call; `kind` is `timeout` or `failure`."""
        self.store_errors.labels(kind).inc()

    async def refresh_store(
        self, count: Callable[[], Awaitable[int]], timeout_seconds: float
    ) -> None:
        """Set `cstp_decisions` from `count()` and `cstp_store_up` to 1, within the timeout.

        When Chroma fails, or does not answer within `timeout_seconds` (counted as a store
        error of kind `timeout`), `cstp_store_up` is 0 and `cstp_decisions` keeps its last value,
        so a scrape is never held up by a slow store. When no worker thread is free to ask
        (Saturated), both keep their last values: Chroma is not at fault.
        """
        with anyio.move_on_after(timeout_seconds) as scope:
            try:
                self.decisions.set(await count())
            except Saturated:
                return
            except (StoreUnavailable, EmbeddingModelMismatch):
                self.store_up.set(0)
            else:
                self.store_up.set(1)
        if scope.cancelled_caught:
            self.store_up.set(0)
            self.store_failed("timeout")

    def exposition(self) -> bytes:
        """Every series in Prometheus' text format (CONTENT_TYPE)."""
        return generate_latest(self.registry)


def code_label(code: int | None) -> str:
    """`ok` for a success (None), else the JSON-RPC error code as text (`-32602`)."""
    return "ok" if code is None else str(code)
