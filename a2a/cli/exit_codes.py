"""The exit codes of the `cstp` command, one meaning each (the README's table says the same)."""

from __future__ import annotations

from typing import Final

#: Done.
OK: Final = 0
#: `index` (and `serve --index`): some files could not be indexed, the rest were.
#: `import`: some lines were bad or in conflict, the rest were imported.
#: `query` and the decision commands (`record`, `review`, `get`, `list`, `calibration`): the
#: service answered with a JSON-RPC error (its code is printed).
FAILED: Final = 1
#: A bad setting, option or argument (typer/click usage errors also exit 2).
SETTINGS: Final = 2
#: The store or the embedding model cannot be used (locked, unreachable, model mismatch).
STORE: Final = 3
#: `serve`: the address cannot be bound (the port is in use, or not ours to take).
ADDRESS: Final = 4
#: `query` and the decision commands: the service could not be reached, or did not answer in
#: JSON-RPC.
UNREACHABLE: Final = 5
#: `guard`: the service's guardrails warn about the proposal (act, but say so).
GUARD_WARN: Final = 6
#: `guard`: the service's guardrails block the proposal (do not act).
GUARD_BLOCK: Final = 7
#: Stopped by SIGINT / SIGTERM, having stored what was embedded (128 + signal number).
INTERRUPTED_SIGINT: Final = 130
INTERRUPTED_SIGTERM: Final = 143
