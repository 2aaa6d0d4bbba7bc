"""The Metrics object: labels, counting from call outcomes, the store gauges on scrape."""

from __future__ import annotations

import anyio
from prometheus_client.parser import text_string_to_metric_families

from a2a.errors import StoreUnavailable
from a2a.observability.metrics import Metrics
from a2a.rpc.errors import ErrorObject
from a2a.rpc.pipeline import Outcome


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every exposed sample as (name, sorted labels) -> value, parsed from the exposition."""
    text = metrics.exposition().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def failed(method: str | None, code: int, data: object = None) -> Outcome:
    return Outcome(method, error=ErrorObject(code, "error", data))


def test_calls_are_counted_by_served_method_and_code() -> None:
    metrics = Metrics(served={"cstp.queryDecisions"})
    metrics.count_calls(
        [
            Outcome("cstp.queryDecisions", result={}),
            Outcome("cstp.queryDecisions", result={}),
            failed("cstp.queryDecisions", -32602),
            failed("cstp.noSuchMethod", -32601),
            failed(None, -32600),
        ]
    )
    got = samples(metrics)
    calls = "cstp_rpc_calls_total"
    assert got[(calls, (("code", "ok"), ("method", "cstp.queryDecisions")))] == 2
    assert got[(calls, (("code", "-32602"), ("method", "cstp.queryDecisions")))] == 1
    assert got[(calls, (("code", "-32601"), ("method", "other")))] == 1
    assert got[(calls, (("code", "-32600"), ("method", "other")))] == 1


def test_rate_limited_calls_are_counted_per_method() -> None:
    metrics = Metrics(served={"cstp.queryDecisions"})
    metrics.count_calls([failed("cstp.queryDecisions", -32002, {"retryAfter": 3})] * 2)
    got = samples(metrics)
    assert got[("cstp_rate_limited_total", (("method", "cstp.queryDecisions"),))] == 2


def test_two_instances_never_share_series() -> None:
    first, second = Metrics(), Metrics()
    first.store_failed("timeout")
    assert samples(first)[("cstp_store_errors_total", (("kind", "timeout"),))] == 1
    assert ("cstp_store_errors_total", (("kind", "timeout"),)) not in samples(second)


async def test_scrape_reads_the_decision_count_and_marks_the_store_up() -> None:
    metrics = Metrics()

    async def count() -> int:
        return 42

    await metrics.refresh_store(count, timeout_seconds=5)
    got = samples(metrics)
    assert got[("cstp_decisions", ())] == 42 and got[("cstp_store_up", ())] == 1


async def test_failing_store_keeps_the_last_count_and_marks_the_store_down() -> None:
    metrics = Metrics()
    metrics.decisions.set(7)

    async def count() -> int:
        raise StoreUnavailable("down")

    await metrics.refresh_store(count, timeout_seconds=5)
    got = samples(metrics)
    assert got[("cstp_decisions", ())] == 7 and got[("cstp_store_up", ())] == 0


async def test_store_that_never_answers_is_a_timeout_error_not_a_hung_scrape() -> None:
    metrics = Metrics()

    async def count() -> int:
        await anyio.Event().wait()
        return 0

    await metrics.refresh_store(count, timeout_seconds=0.01)
    got = samples(metrics)
    assert got[("cstp_store_up", ())] == 0
    assert got[("cstp_store_errors_total", (("kind", "timeout"),))] == 1
    assert got[("cstp_decisions", ())] == -1
