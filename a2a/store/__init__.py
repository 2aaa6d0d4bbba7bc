"""Where decisions live: a Chroma collection behind a small interface.

Import from the modules (`a2a.store.chroma`, `a2a.store.metadata`, ...): this package itself
imports nothing, so a light module here (metadata) does not load chromadb.
"""
