"""One CEL expression of a rule: compiled once, checked before the service starts, run per
check.

The CEL library is `common-expression-language` (module `cel`, Rust through PyO3), chosen
by bench/cel_choice.py: 20 rules evaluate in ~0.4 ms a check where cel-python takes ~39 ms.
It compiles without declarations (no type checking at compile time), so what it cannot
find is looked for here, before the start:
- unknown variables: the names the program reads, less the four variables and the names
  its comprehensions bind;
- wrong types and unknown fields: the expression evaluated once on a probe where every
  field is present (a type error or a missing field there is one on every input);
- a result that is not a bool, on that probe;
- slowness by construction: the library holds the GIL while it evaluates (measured in
  bench/cel_choice.py: no other thread ran during a 0.76 s evaluation) and has no step
  limit, so no deadline can interrupt a rule once it runs. A rule is refused when its
  comprehensions nest deeper than MAX_NESTING, or when it takes longer than
  PROBE_BUDGET_MS on the largest input recordDecision's bounds allow.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass
from typing import Final

import cel

from a2a.errors import ExpressionError

#: The variables an expression sees (CONTRACT.md, Guardrails).
VARIABLES: Final = frozenset({"proposal", "precedents", "calibration", "now"})
#: The CEL macros that loop over a list or map (the comprehensions).
COMPREHENSIONS: Final = frozenset({"all", "exists", "exists_one", "filter", "map"})
#: Deepest nesting of comprehensions: ranges here have at most 64 items (tags), so two
#: levels are at most 4,096 steps; three would be 262,144 (0.76 s measured).
MAX_NESTING: Final = 2
#: Longest an expression may take on the largest input, milliseconds, checked at start.
PROBE_BUDGET_MS: Final = 50.0

_TOKENS = re.compile(
    r"""(?P<string>[rRbB]{0,2}(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
      |(?P<macro>\.\s*(?P<name>[A-Za-z_]\w*)\s*\(\s*(?P<bound>[A-Za-z_]\w*)?)
      |(?P<open>\()
      |(?P<close>\))""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Shape:
    """What the source says of an expression's loops: their deepest nesting, and the names
    its comprehensions bind (`p` in `precedents.exists(p, ...)`)."""

    nesting: int
    bound: frozenset[str]


def shape(source: str) -> Shape:
    """The comprehensions of `source`: string literals skipped, parentheses counted."""
    stack: list[bool] = []
    deepest = 0
    bound: set[str] = set()
    for token in _TOKENS.finditer(source):
        if token["macro"] is not None:
            is_loop = token["name"] in COMPREHENSIONS
            stack.append(is_loop)
            if is_loop and token["bound"]:
                bound.add(token["bound"])
            deepest = max(deepest, sum(stack))
        elif token["open"] is not None:
            stack.append(False)
        elif token["close"] is not None and stack:
            stack.pop()
    return Shape(deepest, frozenset(bound))


class Expression:
    """A CEL expression compiled once: `run(context)` evaluates it on one check's variables."""

    def __init__(self, source: str) -> None:
        """Raises ExpressionError for a syntax error, an unknown variable or comprehensions
        nested deeper than MAX_NESTING."""
        self.source = source
        try:
            self._program = cel.compile(source)
        except Exception as exc:  # the library raises ValueError, and others on odd input
            raise ExpressionError(f"syntax: {_first_line(exc)}") from None
        loops = shape(source)
        unknown = set(self._program.variables()) - VARIABLES - loops.bound
        if unknown:
            names = ", ".join(sorted(unknown))
            raise ExpressionError(
                f"unknown variable {names} (the variables are calibration, now, precedents,"
                " proposal)"
            )
        if loops.nesting > MAX_NESTING:
            raise ExpressionError(
                f"comprehensions nested {loops.nesting} deep, at most {MAX_NESTING} (a rule"
                " must stay cheap on the largest input)"
            )

    def run(self, context: cel.Context) -> bool:
        """The expression's value on `context` (a2a.guardrails.variables.context).

        Raises ExpressionError naming the error: a missing field, a type error, a division
        by zero, a result that is not a bool.
        """
        try:
            value = self._program.execute(context)
        except KeyError as exc:
            raise ExpressionError(f"no such field {exc}") from None
        except TypeError as exc:
            raise ExpressionError(f"wrong type: {_first_line(exc)}") from None
        except Exception as exc:  # CEL's run-time errors come as several Python types
            raise ExpressionError(_first_line(exc)) from None
        if not isinstance(value, bool):
            raise ExpressionError(f"the value is {type(value).__name__}, not a bool")
        return value

    def probe(self, full: cel.Context, largest: cel.Context) -> None:
        """Raise ExpressionError when the expression fails on `full` (every field present:
        a wrong type or an unknown field), or takes longer than PROBE_BUDGET_MS on
        `largest`."""
        self.run(full)
        started = time.perf_counter()
        with contextlib.suppress(ExpressionError):  # only its time matters here
            self.run(largest)
        elapsed = (time.perf_counter() - started) * 1000
        if elapsed > PROBE_BUDGET_MS:
            raise ExpressionError(
                f"slow: {elapsed:.0f} ms on the largest proposal, at most {PROBE_BUDGET_MS:.0f}"
            )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
