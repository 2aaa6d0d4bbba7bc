"""The BM25 analyser's stop words are bm25s' English list, written out."""

from __future__ import annotations

import subprocess
import sys

from bm25s.stopwords import STOPWORDS_EN as BM25S_ENGLISH

from a2a.index.tokens import STOPWORDS_EN, analyze


def test_the_stop_words_are_bm25s_english_list() -> None:
    assert frozenset(BM25S_ENGLISH) == STOPWORDS_EN
    assert len(STOPWORDS_EN) == 33
    assert analyze("The cluster is in the region") == ["cluster", "region"]


def test_the_analyser_does_not_import_scipy() -> None:
    """bm25s' package imports scipy (~0.18 s); the service's index does not need it."""
    code = "import sys, a2a.index.tokens; print('scipy' in sys.modules, 'bm25s' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.split() == ["False", "False"]
