"""a2a/errors.py: the one exception tree, and the tree written at its top kept true."""

from __future__ import annotations

import ast
import inspect
import re

import a2a.errors
from tests.conftest import REPO

#: Names a class outside a2a/errors.py may not derive from: an exception class lives there.
_EXCEPTION_BASES = {"Exception", "ValueError", "RuntimeError", "LookupError", "OSError"} | {
    name for name, cls in vars(a2a.errors).items() if isinstance(cls, type)
}
_BRANCH = re.compile(r"^(?P<indent>[\s│├└─]*)(?P<name>[A-Z]\w+)\b")


def _drawn_tree() -> dict[str, str]:
    """Each class named in the module docstring's tree -> its parent there (roots: Exception)."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in (a2a.errors.__doc__ or "").splitlines():
        match = _BRANCH.match(line)
        if match is None or not line.startswith("    "):
            continue
        column = len(match["indent"])
        while stack and stack[-1][0] >= column:
            stack.pop()
        parents[match["name"]] = stack[-1][1] if stack else "Exception"
        stack.append((column, match["name"]))
    return parents


def test_the_tree_at_the_top_names_every_exception_class_under_its_base() -> None:
    classes = {
        name: cls
        for name, cls in inspect.getmembers(a2a.errors, inspect.isclass)
        if issubclass(cls, Exception) and cls.__module__ == "a2a.errors"
    }
    drawn = _drawn_tree()
    assert set(drawn) == set(classes)
    assert {name: classes[name].__bases__[0].__name__ for name in classes} == drawn


def test_every_exception_class_outside_the_client_is_defined_in_a2a_errors() -> None:
    """The client library keeps its own tree (a2a/client/errors.py); a private exception
    that never leaves its module (a leading underscore) may stay there."""
    strays = []
    for path in sorted((REPO / "a2a").rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative == "a2a/errors.py" or relative.startswith("a2a/client/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            bases = {ast.unparse(base).rpartition(".")[2] for base in node.bases}
            if bases & _EXCEPTION_BASES:
                strays.append(f"{relative}: {node.name}")
    assert strays == []
