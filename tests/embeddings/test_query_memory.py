"""Embedding a query keeps nothing per text (issue 44, item 6): a replica answering new
query texts all day must not grow with them.

The memory measured is glibc's heap in use (mallinfo2: the bytes malloc has handed out and
not had back), where the tokenizers' Rust caches live and tracemalloc cannot see; not RSS.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import pytest

from a2a.embeddings import load_embedder

#: Distinct query texts embedded: WordLlama's tokenizer cache kept ~2.9 KiB of each (5.8 MiB).
TEXTS = 2000
#: Heap growth allowed over TEXTS texts: 256 bytes a text, a tenth of what the cache kept.
ALLOWED_BYTES = TEXTS * 256


#: glibc's `struct mallinfo2`, every field a size_t, in its order.
_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd")
_FIELDS += ("usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _FIELDS]


def _heap_in_use() -> int:
    """Bytes in use in malloc's heap, every arena and mmapped chunk together (glibc >= 2.33)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    mallinfo2 = getattr(libc, "mallinfo2", None)
    if mallinfo2 is None:
        pytest.skip("needs glibc's mallinfo2 (2.33+) to read the heap in use")
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return int(info.uordblks + info.hblkhd)


def test_new_wordllama_query_texts_leave_the_heap_where_it_was() -> None:
    fast = load_embedder("wordllama-l2-supercat-256")
    for n in range(50):  # numpy's and the tokenizer's first-call allocations
        fast.embed_query(f"warm up {n}")
    before = _heap_in_use()
    for n in range(TEXTS):  # under 256 bytes: the length the BPE cache kept whole
        fast.embed_query(f"which database should keep the audit log of service {n}")
    grown = _heap_in_use() - before
    assert grown < ALLOWED_BYTES, f"{grown / TEXTS:.0f} bytes kept per query text"
