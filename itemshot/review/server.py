"""Serving the review app with uvicorn on a socket bound before the app starts.

Binding first lets `--port 0` pick a free port and the allowed Host names
name the real port; the address is printed once the app is ready.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn

from itemshot.review.app import create_app
from itemshot.review.index import ReviewIndex
from itemshot.review.security import Access


class _Server(uvicorn.Server):
    """A uvicorn server that says where it listens once its app has started."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self.on_ready()


def bind(host: str, port: int) -> socket.socket:
    """Return a listening TCP socket on host:port (port 0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(
    out: Path,
    *,
    host: str,
    port: int,
    reviewer: str,
    token: str | None,
    on_ready: Callable[[str, ReviewIndex], None],
) -> None:
    """Build the index, bind, and serve the review app until interrupted (SIGINT/SIGTERM)."""
    Access.for_bind(host, port, token)  # refuse an unsafe bind before doing any work
    index = ReviewIndex(out)
    sock = bind(host, port)
    actual = sock.getsockname()[1]
    access = Access.for_bind(host, actual, token)
    app = create_app(out, reviewer=reviewer, access=access, index=index)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{actual}/"
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=5
    )
    server = _Server(config, lambda: on_ready(url, index))
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again
    # with the handlers it found: make those end the command normally.
    previous = {sig: signal.signal(sig, _stopped) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run(sockets=[sock])
    except _Stop:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()


class _Stop(Exception):
    """The server was asked to stop (and has shut down)."""


def _stopped(_signal: int, _frame: object) -> None:
    raise _Stop
