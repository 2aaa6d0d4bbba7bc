"""Text -> BM25 terms, as bm25s tokenises with English stop words and Snowball stemming."""

from __future__ import annotations

import functools
import re
import threading
from typing import Final

import Stemmer

#: bm25s' default token pattern (scikit-learn's CountVectorizer): runs of 2+ word characters.
_WORD: Final = re.compile(r"(?u)\b\w\w+\b")
#: bm25s' English stop words (`bm25s.stopwords.STOPWORDS_EN`): Lucene's classic English stop
#: set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET). Written out, not imported: importing bm25s
#: imports scipy, ~0.18 s of every `cstp serve` start. tests/index/test_tokens.py checks
#: that the two lists are the same.
STOPWORDS_EN: Final = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their"  # noqa: SIM905
    " then there these they this to was will with".split()
)
#: Query texts whose terms `analyze_query` keeps (a few hundred bytes each).
QUERIES_KEPT: Final = 1024
# PyStemmer's Stemmer keeps state while stemming and is not safe to share across threads.
_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def analyze(text: str) -> list[str]:
    """Lower-cased word tokens, bm25s' English stop words removed, Snowball-stemmed.

    The same terms `bm25s.tokenize(text, stopwords="en", stemmer=Stemmer("english"))`
    gives; safe to call from any thread (one stemmer per thread).
    """
    words = [word for word in _WORD.findall(text.lower()) if word not in STOPWORDS_EN]
    return list(_stemmer().stemWords(words)) if words else []


@functools.lru_cache(maxsize=QUERIES_KEPT)
def analyze_query(text: str) -> tuple[str, ...]:
    """`analyze(text)` as a tuple, kept for the QUERIES_KEPT most recent texts: a query is
    analysed for its work estimate (a2a.query.service) and again by its search, and agents
    repeat queries. Thread-safe (functools.lru_cache)."""
    return tuple(analyze(text))
