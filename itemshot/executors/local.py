"""The local executor: one backend (a Chromium pool by default) on this machine.

The backend lives on an asyncio event loop in a thread of its own, fed by
`backend.slots` worker coroutines that pull jobs in plan order. Results reach
the driver through a bounded queue, so a slow writer holds the renderers back
instead of letting finished images pile up in memory.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from itemshot.executors.base import JobResult, produce
from itemshot.renderer.backends import Backend
from itemshot.renderer.jobs import Job

BackendFactory = Callable[[], Backend]
_DONE = object()


def chromium_factory(browsers: int = 2, pages: int = 2) -> BackendFactory:
    """Return a factory of Chromium backends with `browsers` processes × `pages` slots."""

    def make() -> Backend:
        from itemshot.renderer.backends.chromium import ChromiumBackend

        return ChromiumBackend(browsers, pages)

    return make


@dataclass
class _Channel:
    """What the backend's thread and the driver share: results, room for more, a stop flag."""

    results: queue.Queue[object] = field(default_factory=queue.Queue)
    # Results waiting for the driver: the workers take a ticket per job, the driver
    # hands one back per result it has written.
    room: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    stop: threading.Event = field(default_factory=threading.Event)


class LocalExecutor:
    """Run jobs through one backend on this machine and stream the results back."""

    def __init__(self, backend: BackendFactory | None = None, *, workers: int = 2) -> None:
        self.backend_factory = backend or chromium_factory(max(1, workers))
        self.startup_seconds = 0.0

    def run(self, jobs: Sequence[Job]) -> Generator[JobResult, None, None]:
        """Yield one result per job in completion order; stop the backend when done."""
        if not jobs:
            return
        channel = _Channel()
        thread = threading.Thread(
            target=self._serve, args=(jobs, channel), name="itemshot-local", daemon=True
        )
        thread.start()
        try:
            while True:
                entry = channel.results.get()
                if entry is _DONE:
                    break
                if isinstance(entry, BaseException):
                    raise entry
                assert isinstance(entry, JobResult)
                yield entry
                channel.room.release()
        finally:
            channel.stop.set()
            for _ in range(len(jobs)):  # wake every waiting worker so the thread can end
                channel.room.release()
            thread.join()

    def _serve(self, jobs: Sequence[Job], channel: _Channel) -> None:
        try:
            asyncio.run(self._work(jobs, channel))
        except BaseException as error:  # handed to the driver, which re-raises it
            channel.results.put(error)
        finally:
            channel.results.put(_DONE)

    async def _work(self, jobs: Sequence[Job], channel: _Channel) -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda loop, context: _unless_stopped(channel, loop, context))
        backend = self.backend_factory()
        started = time.perf_counter()
        async with backend:
            self.startup_seconds = time.perf_counter() - started
            workers = max(1, min(backend.slots, len(jobs)))
            for _ in range(workers * 2):
                channel.room.release()
            pending = iter(jobs)

            async def worker() -> None:
                for job in pending:
                    # Wait for room in the driver's queue without blocking the loop.
                    await asyncio.to_thread(channel.room.acquire)
                    if channel.stop.is_set():
                        return
                    channel.results.put(await produce(backend, job))

            await asyncio.gather(*(worker() for _ in range(workers)))


def _unless_stopped(
    channel: _Channel, loop: asyncio.AbstractEventLoop, context: dict[str, Any]
) -> None:
    """Report an unhandled error of the backend's loop, unless the driver has stopped the run.

    After a stop (Ctrl-C reaches the whole process group, so the browser driver
    dies with the run) the backend's pending calls fail with "connection
    closed"; those are the stop itself, not news, and would only print noise
    under the one message the command ends with.
    """
    if not channel.stop.is_set():
        loop.default_exception_handler(context)
