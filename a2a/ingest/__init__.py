"""Importers: turn ADR Markdown and YAML/JSON decision files into DecisionRecords; the indexer
(`cstp index`: files -> records -> embeddings -> store), prune and stopping live beside them."""

from a2a.ingest.dates import parse_loose_date, parse_record_date
from a2a.ingest.loader import SUPPORTED_SUFFIXES, LoadedFile, discover, load_file
from a2a.ingest.markdown_adr import parse_adr
from a2a.ingest.status import STATUS_WORDS, map_status
from a2a.ingest.structured import parse_structured

__all__ = [
    "STATUS_WORDS",
    "SUPPORTED_SUFFIXES",
    "LoadedFile",
    "discover",
    "load_file",
    "map_status",
    "parse_adr",
    "parse_loose_date",
    "parse_record_date",
    "parse_structured",
]
