"""`cstp serve`'s server: uvicorn with one process or several, saying where the console is."""

from __future__ import annotations

import contextlib
import logging
import socket
from typing import Any

import typer
import uvicorn
from uvicorn.config import STARTUP_FAILURE

log = logging.getLogger(__name__)


class _Server(uvicorn.Server):
    """uvicorn's server, logging the console's address once it listens."""

    def __init__(self, config: uvicorn.Config, console: str) -> None:
        super().__init__(config)
        self.console = console

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:  # False when the address could not be bound (uvicorn logged why)
            log.info("console: %s", self.console)


def serve_app(app: Any, options: dict[str, Any], console: str) -> None:
    """Serve `app` in this process until SIGINT/SIGTERM, as `uvicorn.run(app, **options)`
    does, logging `console` (the console's URL) once the address is bound.

    Raises typer.Exit(3), uvicorn's start-up failure, when the server did not start.
    """
    server = _Server(uvicorn.Config(app, **options), console)
    # uvicorn raises the SIGINT it caught again once it has stopped.
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        raise typer.Exit(STARTUP_FAILURE)


def serve_workers(factory: str, workers: int, options: dict[str, Any], console: str) -> None:
    """Serve the app `factory` (an import string) in `workers` processes, uvicorn's
    supervisor binding the address for them, after logging `console`."""
    log.info("console: %s (once the %d workers are up)", console, workers)
    uvicorn.run(factory, factory=True, workers=workers, **options)
