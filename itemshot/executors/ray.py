"""The Ray executor: render actors on a Ray cluster, results streamed back to the driver.

Each render actor holds one backend (a Chromium browser with `pages` page
slots by default) on the actor's own asyncio event loop — async Playwright,
started inside the loop that serves every call — and reserves one CPU.
A job travels with its assets (the item's figure bytes), so the workers need
no shared filesystem; the actor renders it and applies its capture with the
same `produce` as the local executor, and the result comes back to the
driver, which writes it. The driver keeps at most `2 × pages` jobs in flight
per actor: that bounds both the object store and the driver's memory
whatever the sweep's size, and keeps every browser busy.

Faults: a crashed browser (or Playwright driver) inside an actor makes the
actor drop its backend and start a new one; an actor process that dies is
restarted by Ray. Either way the jobs it held are sent again, up to
`attempts` tries each; a job that still fails is recorded as failed with its
reason and the run goes on.

`map` runs the verifier's per-image tasks as Ray tasks of one CPU each, with
the files a task names shipped along (see `itemshot.verify.verify_output_set`'s
`map_tasks`).

Ray itself is imported only when a cluster is first used, so the local
executor works without it (`pip install 'itemshot[ray]'` adds it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import tempfile
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from itemshot.executors.base import JobResult, produce
from itemshot.executors.local import BackendFactory, chromium_factory
from itemshot.executors.ray_auth import ClusterRefused, prepare_driver, restore_driver
from itemshot.renderer.backends import Backend
from itemshot.renderer.jobs import Job

T = TypeVar("T")
R = TypeVar("R")

# Ray resolves 127.0.0.1 to the machine's own non-loopback address unless this
# switch is off (read when `ray` is imported; verified on Ray 2.60).
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
READY_TIMEOUT_S = 300.0
# Probes of a restarting actor that may fail in a row before it counts as lost (a
# probe sent before Ray saw the death fails at once); with every actor lost, the run
# stops with an error (a re-run resumes).
MAX_PROBE_FAILURES = 20
FAULT_REASON = "worker_fault"


class RayUnavailable(RuntimeError):
    """Ray is not installed, the cluster cannot be reached, or its workers cannot render."""


class WorkerFault(RuntimeError):
    """The backend inside a render actor broke (browser crash); the actor has reset it."""


def is_loopback(address: str | None) -> bool:
    """Return whether a Ray address (None: a new local instance) stays on this machine's loopback."""
    if address in (None, "", "local"):
        return True
    host = str(address).removeprefix("ray://").rsplit(":", 1)[0].strip("[]")
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def import_ray(address: str | None) -> Any:
    """Import Ray, switched to loopback addresses when `address` is on this machine."""
    import sys

    already = sys.modules.get("ray")
    if already is not None and already.is_initialized():
        return already  # connected by the caller: their cluster, their settings
    if is_loopback(address):
        if already is None:
            os.environ[LOOPBACK_SWITCH] = "0"
        else:
            from ray._private import ray_constants

            if ray_constants.ENABLE_RAY_CLUSTER:
                raise RayUnavailable(
                    f"Ray was imported before itemshot could keep it on 127.0.0.1: set "
                    f"{LOOPBACK_SWITCH}=0 in the environment before importing ray"
                )
    try:
        import ray
    except ImportError:
        raise RayUnavailable("the Ray executor needs Ray: pip install 'itemshot[ray]'") from None
    return ray


class RenderActor:
    """One backend on a Ray worker, reset when it breaks; the class Ray makes an actor of.

    Ray runs every `async` method of an actor on one event loop in one thread,
    so the backend's async Playwright lives on that loop from start to end.
    """

    def __init__(self, factory: BackendFactory) -> None:
        self._factory = factory
        self._backend: Backend | None = None
        self._generation = 0
        self._lock: asyncio.Lock | None = None

    async def ready(self) -> float:
        """Start the backend if it is not running; return the seconds it took."""
        started = time.perf_counter()
        await self._current()
        return time.perf_counter() - started

    async def close(self) -> None:
        """Stop the backend (close its browsers) before the actor is killed."""
        backend, self._backend = self._backend, None
        if backend is not None:
            await backend.__aexit__(None, None, None)

    async def produce(self, job: Job) -> JobResult:
        """Render one job and apply its capture; raise `WorkerFault` if the backend broke."""
        backend, generation = await self._current()
        try:
            return await produce(backend, job)
        except Exception as error:
            await self._reset(generation)
            raise WorkerFault(f"{type(error).__name__}: {_first_line(error)}") from None

    async def _current(self) -> tuple[Backend, int]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._backend is None:
                backend = self._factory()
                await backend.__aenter__()
                self._backend = backend
            return self._backend, self._generation

    async def _reset(self, generation: int) -> None:
        """Drop the backend of `generation` (once, however many calls saw it break)."""
        assert self._lock is not None
        async with self._lock:
            if generation != self._generation or self._backend is None:
                return
            broken, self._backend = self._backend, None
            self._generation += 1
            # A dead browser may fail to close: it is gone either way.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(broken.__aexit__(None, None, None), 30)


@dataclass
class _InFlight:
    job: Job
    actor: int


class RayExecutor:
    """Run jobs on a Ray cluster's render actors and stream the results back, bounded.

    `address` is a cluster (`HOST:PORT`, `ray://…`, `auto`); None reads
    RAY_ADDRESS and otherwise starts a single-machine instance on 127.0.0.1.
    `actors` render actors of one CPU each (None: one per CPU of the cluster),
    each a backend from `backend` (default: one Chromium with `pages` pages).
    A head that asks for a token gets this driver's (`RAY_AUTH_TOKEN`,
    `RAY_AUTH_TOKEN_PATH` or `~/.ray/auth_token`); see `ray_auth`.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        actors: int | None = None,
        pages: int = 2,
        attempts: int = 3,
        backend: BackendFactory | None = None,
    ) -> None:
        self.address = address if address is not None else os.environ.get("RAY_ADDRESS") or None
        self.actors = actors
        self.pages = max(1, pages)
        self.attempts = max(1, attempts)
        self.backend_factory = backend or chromium_factory(1, self.pages)
        self.startup_seconds = 0.0
        self._ray: Any = None
        self._connected_here = False
        self._token_mode = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> Any:
        """Connect to the cluster (once) and return the `ray` module."""
        if self._ray is not None:
            return self._ray
        ray = import_ray(self.address)
        if not ray.is_initialized():
            options: dict[str, Any] = {"logging_level": "WARNING", "log_to_driver": False}
            if self.address in (None, "local"):
                options.update(address="local", include_dashboard=False)
            else:
                options["address"] = self.address
            where = self.address or "a local instance"
            try:
                # A head may ask for a token: present one only then (see ray_auth).
                self._token_mode = prepare_driver(self.address)
                ray.init(**options)
            except ClusterRefused as refused:
                raise RayUnavailable(f"cannot connect to Ray at {where}: {refused}") from None
            except Exception as error:
                self._restore_auth()
                raise RayUnavailable(
                    f"cannot connect to Ray at {where}: {_first_line(error)}"
                ) from None
            self._connected_here = True
        self._ray = ray
        return ray

    def close(self) -> None:
        """Disconnect from the cluster if this executor connected (actors are already gone)."""
        if self._ray is not None and self._connected_here:
            self._ray.shutdown()
            self._restore_auth()
        self._ray, self._connected_here = None, False

    def _restore_auth(self) -> None:
        """Leave token mode if this executor turned it on, so the next cluster is asked afresh."""
        if self._token_mode:
            restore_driver()
            self._token_mode = False

    def cluster_cpus(self) -> int:
        """Return the whole CPUs the cluster has."""
        return int(self.connect().cluster_resources().get("CPU", 0))

    def run(self, jobs: Sequence[Job]) -> Generator[JobResult, None, None]:
        """Yield one result per job in completion order; stop the actors when done."""
        if not jobs:
            return
        started = time.perf_counter()
        ray = self.connect()
        actors = self._start_actors(ray, len(jobs))
        try:
            self.startup_seconds = time.perf_counter() - started
            yield from self._dispatch(ray, actors, jobs)
        finally:
            _stop(ray, actors)

    def _start_actors(self, ray: Any, jobs: int) -> list[Any]:
        cpus = self.cluster_cpus()
        if cpus < 1:
            raise RayUnavailable("the Ray cluster has no CPU to run a render actor on")
        wanted = self.actors or cpus
        count = max(1, min(wanted, cpus, -(-jobs // self.pages)))
        actor_class = ray.remote(RenderActor).options(
            num_cpus=1,
            max_concurrency=self.pages,
            max_restarts=-1,  # bounded by the jobs' attempts, not by the actor
            max_task_retries=0,  # the driver resends, counting attempts
        )
        actors = [actor_class.remote(self.backend_factory) for _ in range(count)]
        try:
            ray.get([actor.ready.remote() for actor in actors], timeout=READY_TIMEOUT_S)
        except Exception as error:
            _stop(ray, actors)
            raise RayUnavailable(
                f"the Ray render actors did not start: {_first_line(_cause(error))}"
            ) from None
        return actors

    def _dispatch(self, ray: Any, actors: list[Any], jobs: Sequence[Job]) -> Iterator[JobResult]:
        """Keep every live actor fed, resend what a fault lost, and yield each result."""
        from ray.exceptions import RayActorError, RayError

        todo = deque(jobs)
        tries: dict[str, int] = {}
        load = [0] * len(actors)
        limit = 2 * self.pages  # the slots busy, and as many jobs queued behind them
        flying: dict[Any, _InFlight] = {}
        # An actor whose process died gets no job until a probe (`ready`) answers
        # from its restarted process: a job sent meanwhile would fail at once.
        probes: dict[Any, int] = {}
        probe_failures = [0] * len(actors)
        down: set[int] = set()

        def probe(actor: int) -> None:
            down.add(actor)
            probes[actors[actor].ready.remote()] = actor

        while todo or flying:
            while todo:
                free = [i for i in range(len(actors)) if i not in down and load[i] < limit]
                if not free:
                    break
                actor = min(free, key=load.__getitem__)
                job = todo.popleft()
                flying[actors[actor].produce.remote(job)] = _InFlight(job, actor)
                load[actor] += 1
            [ref], _ = ray.wait([*flying, *probes], num_returns=1)
            if ref in probes:
                actor = probes.pop(ref)
                try:
                    ray.get(ref)
                except RayError as error:
                    probe_failures[actor] += 1
                    if probe_failures[actor] < MAX_PROBE_FAILURES:
                        probes[actors[actor].ready.remote()] = actor
                    elif not probes and len(down) == len(actors):  # every actor is lost
                        raise RayUnavailable(
                            f"no render actor came back: {_first_line(_cause(error))}"
                        ) from None
                else:
                    down.discard(actor)
                    probe_failures[actor] = 0
                continue
            entry = flying.pop(ref)
            load[entry.actor] -= 1
            try:
                result = ray.get(ref)
            except RayError as error:
                if isinstance(error, RayActorError) and entry.actor not in down:
                    probe(entry.actor)
                tries[entry.job.key] = tries.get(entry.job.key, 0) + 1
                if tries[entry.job.key] < self.attempts:
                    todo.appendleft(entry.job)  # again, ahead of the jobs not yet tried
                    continue
                result = JobResult(entry.job, error=self._gave_up(entry.job, error))
            del ref
            yield result

    def _gave_up(self, job: Job, error: Exception) -> dict[str, Any]:
        cause = _cause(error)
        return {
            "item_id": job.item.id,
            "field": "page",
            "reason": FAULT_REASON,
            "message": f"failed on all {self.attempts} attempts; last: "
            f"{type(cause).__name__}: {_first_line(cause)}"[:300],
        }

    def map(
        self,
        function: Callable[[T], R],
        tasks: Iterable[T],
        workers: int | None = None,
        on_done: Callable[[], None] | None = None,
    ) -> list[R]:
        """Return `function(task)` for every task, in task order, run as one-CPU Ray tasks.

        The same contract as `itemshot.verify.pool.run_all`. Files that a
        (dataclass) task names by `Path` are read here and shipped with it, so
        the workers need no shared filesystem; at most twice `workers` (default:
        the cluster's CPUs) tasks are in flight.
        """
        ray = self.connect()
        todo = list(tasks)
        results: list[Any] = [None] * len(todo)
        remote = ray.remote(num_cpus=1, max_retries=self.attempts - 1)(run_shipped)
        limit = 2 * max(1, workers or self.cluster_cpus())
        flying: dict[Any, int] = {}
        pending = iter(enumerate(todo))
        while True:
            for index, task in pending:
                flying[remote.remote(function, *ship(task))] = index
                if len(flying) >= limit:
                    break
            if not flying:
                break
            [ref], _ = ray.wait(list(flying), num_returns=1)
            results[flying.pop(ref)] = ray.get(ref)
            if on_done:
                on_done()
        return results


def ship(task: T) -> tuple[T, dict[str, tuple[str, bytes]]]:
    """Return a task and the bytes of every file it names by a `Path` field."""
    files: dict[str, tuple[str, bytes]] = {}
    if dataclasses.is_dataclass(task) and not isinstance(task, type):
        for field in dataclasses.fields(task):
            value = getattr(task, field.name)
            if isinstance(value, Path) and value.is_file():
                files[field.name] = (value.name, value.read_bytes())
    return task, files


def run_shipped(function: Callable[[T], R], task: T, files: dict[str, tuple[str, bytes]]) -> R:
    """Run `function(task)` on a worker, with the shipped files in a folder of its own."""
    # One tesseract thread per task: Ray gives each task one CPU.
    os.environ["OMP_THREAD_LIMIT"] = "1"
    if not files:
        return function(task)
    with tempfile.TemporaryDirectory(prefix="itemshot-task-") as folder:
        paths = {}
        for name, (filename, data) in files.items():
            path = Path(folder) / name / filename
            path.parent.mkdir()
            path.write_bytes(data)
            paths[name] = path
        return function(dataclasses.replace(task, **paths))  # type: ignore[type-var]


def _stop(ray: Any, actors: list[Any]) -> None:
    """Close the actors' browsers, then end the actors (for good: no restart)."""
    from ray.exceptions import RayError

    # An actor that cannot close cleanly is killed with its browser below.
    with contextlib.suppress(RayError, TimeoutError):
        ray.get([actor.close.remote() for actor in actors], timeout=60)
    for actor in actors:
        ray.kill(actor, no_restart=True)


def _cause(error: BaseException) -> BaseException:
    """Return the error a Ray task raised, unwrapped from Ray's envelope."""
    return getattr(error, "cause", None) or error


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
