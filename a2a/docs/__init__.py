"""cstp.searchDocs: the documentation catalog, its sections, BM25 ranking, the search service."""
