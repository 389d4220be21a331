"""Choosing an executor by name (`local`, `ray`), as the command line and the API do."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from itemshot.executors.base import Executor

EXECUTORS = ("local", "ray")

# An executor by name, one the caller made, or None (local).
ExecutorChoice: TypeAlias = "Executor | str | None"


class ExecutorError(ValueError):
    """An executor name or address that cannot be used."""


@contextmanager
def open_executor(
    choice: ExecutorChoice, *, address: str | None = None, workers: int = 2
) -> Iterator[Executor | None]:
    """Yield the executor `choice` names (None for the local default), closed at the end.

    `choice` is `"local"` (or None), `"ray"` or an executor the caller made and
    keeps owning. For `"ray"`, `address` names the cluster (None: RAY_ADDRESS,
    else a single-machine instance on 127.0.0.1) and `workers` the render
    actors, one CPU and one browser each.
    """
    if choice is not None and not isinstance(choice, str):
        if address is not None:
            raise ExecutorError("address= goes with executor='ray', not with an executor object")
        yield choice
        return
    name = choice or "local"
    if name not in EXECUTORS:
        raise ExecutorError(f"unknown executor {name!r}: use one of {', '.join(EXECUTORS)}")
    if name == "local":
        if address is not None:
            raise ExecutorError("an address names a Ray cluster: it needs the ray executor")
        yield None  # the pipeline's own local Chromium pool, sized by `workers`
        return
    from itemshot.executors.ray import RayExecutor

    with RayExecutor(address, actors=max(1, workers)) as executor:
        yield executor


def task_mapper(executor: Executor | None) -> Any:
    """Return the executor's way to run independent tasks (verification), or None for local."""
    return getattr(executor, "map", None)
