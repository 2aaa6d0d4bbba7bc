"""Two CEL libraries from PyPI side by side, for the guardrail rules (issue 45).

`common-expression-language` (module `cel`, Rust via PyO3) and `cel-python` (module
`celpy`, pure Python on lark), measured in one run on the same 20 rules and inputs:
- compile: milliseconds to compile the 20 rules;
- eval: microseconds to evaluate the 20 rules once per check (the check's variables
  converted once per check where the library allows it), p50 over `--checks` checks;
- errors: the text each gives for a syntax error, an unknown variable and a type error
  (at compile time, or only at evaluation);
- macros: has(), filter, exists, all, size, timestamps;
- slow rule: a triple comprehension over 64 tags (262,144 steps): how long it takes, and
  whether another Python thread runs meanwhile (does the library release the GIL?).

Neither library is a dependency of the other; run it where both are installed:

    python -m venv /tmp/celbench
    /tmp/celbench/bin/pip install common-expression-language cel-python
    /tmp/celbench/bin/python bench/cel_choice.py [--checks 2000]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

RULES = [
    'proposal.stakes == "high"',
    "!has(proposal.confidence) || proposal.confidence >= 0.7",
    'precedents.filter(p, p.distance < 0.3 && p.outcome == "failure").size() == 0',
    'precedents.exists(p, p.outcome == "success")',
    "precedents.all(p, p.distance >= 0.0)",
    'has(proposal.category) && proposal.category == "security"',
    '"reviewed" in proposal.tags',
    "calibration.decisions < 10 || calibration.brierScore < 0.25",
    "size(proposal.title) <= 200",
    'proposal.tags.exists(t, t.startsWith("team:"))',
    'precedents.filter(p, p.status == "reviewed").size() >= 0',
    "now > timestamp('2020-01-01T00:00:00Z')",
    'has(proposal.context) && proposal.context.contains("rollback")',
    "precedents.size() <= 10",
    'precedents.exists(p, p.category == proposal.category && p.outcome == "failure")',
    'proposal.title.matches("^[A-Z]")',
    "!has(proposal.confidence) || proposal.confidence <= 1.0",
    'proposal.stakes != "critical" || "approved" in proposal.tags',
    'precedents.filter(p, p.outcome == "failure").size() < 3',
    "calibration.decisions >= 0",
]
SLOW = "proposal.tags.all(a, proposal.tags.all(b, proposal.tags.all(c, a + b + c != 'x')))"
ERRORS = {
    "syntax": "proposal.stakes == ",
    "unknown variable": 'propsal.stakes == "high"',
    "type": 'proposal.confidence >= "high"',
}


def inputs() -> dict[str, Any]:
    """The variables of one check: a proposal, 10 precedents, a calibration, now."""
    proposal = {
        "title": "Move the billing service to the new cluster",
        "category": "architecture",
        "stakes": "high",
        "confidence": 0.8,
        "context": "the old cluster is end of life; rollback plan ready",
        "tags": ["reviewed", "team:billing"],
    }
    precedents = [
        {
            "id": f"d-{i}",
            "title": f"precedent {i}",
            "distance": 0.1 + i * 0.05,
            "outcome": ["success", "failure", "partial"][i % 3],
            "status": "reviewed",
            "date": "2026-01-01T00:00:00+00:00",
            "confidence": 0.7,
            "category": "architecture",
        }
        for i in range(10)
    ]
    calibration = {"brierScore": 0.18, "decisions": 12}
    return {
        "proposal": proposal,
        "precedents": precedents,
        "calibration": calibration,
        "now": datetime.now(UTC),
    }


class Rust:
    """common-expression-language."""

    name = "common-expression-language"

    def __init__(self) -> None:
        import cel

        self.cel = cel

    def compile(self, text: str) -> Any:
        return self.cel.compile(text)

    def context(self, variables: dict[str, Any]) -> Any:
        return self.cel.Context(variables)

    def run(self, program: Any, context: Any) -> Any:
        return program.execute(context)


class Pure:
    """cel-python."""

    name = "cel-python"

    def __init__(self) -> None:
        import celpy

        self.celpy = celpy
        self.env = celpy.Environment()

    def compile(self, text: str) -> Any:
        return self.env.program(self.env.compile(text))

    def context(self, variables: dict[str, Any]) -> Any:
        converted = dict(variables)
        now = converted.pop("now")
        context = {k: self.celpy.json_to_cel(v) for k, v in converted.items()}
        context["now"] = self.celpy.celtypes.TimestampType(now)
        return context

    def run(self, program: Any, context: Any) -> Any:
        result = program.evaluate(context)
        if isinstance(result, self.celpy.CELEvalError):
            raise RuntimeError(str(result))
        return result


def attempt(action: Callable[[], Any]) -> str:
    try:
        return f"ok: {action()!r}"[:160]
    except Exception as error:  # the text is what is measured
        return f"{type(error).__name__}: {error}".replace("\n", " | ")[:240]


def measure(lib: Any, checks: int) -> None:
    print(f"\n## {lib.name}")
    started = time.perf_counter()
    programs = [lib.compile(rule) for rule in RULES]
    print(f"compile 20 rules: {(time.perf_counter() - started) * 1000:.1f} ms")
    variables = inputs()
    samples = []
    for _ in range(checks):
        started = time.perf_counter()
        context = lib.context(variables)
        for program in programs:
            with contextlib.suppress(Exception):  # a failing rule still costs its time
                lib.run(program, context)
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    print(
        f"eval 20 rules per check: p50 {statistics.median(samples):.0f} us, "
        f"p99 {samples[int(len(samples) * 0.99)]:.0f} us"
    )
    context = lib.context(variables)
    for rule in RULES[:6] + RULES[11:12]:
        print(f"  {rule}: {attempt(lambda r=rule: lib.run(lib.compile(r), context))}")
    for kind, text in ERRORS.items():
        print(f"{kind} at compile: {attempt(lambda t=text: lib.compile(t))}")
        print(f"{kind} at eval: {attempt(lambda t=text: lib.run(lib.compile(t), context))}")
    slow_vars = dict(variables)
    slow_vars["proposal"] = dict(variables["proposal"], tags=[f"t{i}" for i in range(64)])
    slow_context = lib.context(slow_vars)
    program = lib.compile(SLOW)
    ticks = 0
    done = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    started = time.perf_counter()
    outcome = attempt(lambda: lib.run(program, slow_context))
    elapsed = time.perf_counter() - started
    done.set()
    ticker.join()
    print(
        f"slow rule (262,144 steps): {elapsed:.2f} s, {outcome[:60]}; another thread ticked "
        f"{ticks} times (~{elapsed * 1000:.0f} if the GIL is released)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=2000)
    args = parser.parse_args()
    for lib in (Rust, Pure):
        try:
            measure(lib(), args.checks)
        except ImportError as error:
            print(f"\n## {lib.name}: not installed ({error})")


if __name__ == "__main__":
    main()
