"""The generative backends as the Python API and the command line call them.

`render_with_model` runs `nanobanana` or `hybrid` over render requests with
the run's seed, workers and verification choice, and returns the same
`RunResult` a Chromium render does; `estimate_with_model` prices the same run
without sending anything (`--dry-run`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from itemshot.generative.run import GenerativeOptions, estimate_generative, render_generative
from itemshot.results import RunResult

if TYPE_CHECKING:
    from itemshot.renderer.backends.nanobanana.cost import Estimate
    from itemshot.renderer.items import ItemError
    from itemshot.renderer.jobs import JobRequest


def run_options(
    options: GenerativeOptions | None, backend: str, seed: int, workers: int, verify: bool
) -> GenerativeOptions:
    """Return the model options with the run's backend, seed, workers and verification."""
    return dataclasses.replace(
        options or GenerativeOptions(),
        backend=backend,
        seed=seed,
        workers=max(1, workers),
        verify_fallback=verify,
    )


def render_with_model(
    requests: list[JobRequest | ItemError],
    out: Path,
    backend: str,
    options: GenerativeOptions | None,
    *,
    seed: int = 0,
    workers: int = 2,
    verify: bool = True,
    console: Console | None = None,
) -> RunResult:
    """Generate, audit, regenerate and fall back for every request; return the run's record."""
    from itemshot.outputs import read_summary

    chosen = run_options(options, backend, seed, workers, verify)
    result = render_generative(requests, Path(out), chosen, console=console)
    rows = tuple(dict(row) for row in result.manifest)
    return RunResult(Path(out), result.status, rows, read_summary(Path(out)))


def estimate_with_model(
    requests: list[JobRequest | ItemError],
    out: Path,
    backend: str,
    options: GenerativeOptions | None,
    *,
    seed: int = 0,
    workers: int = 2,
) -> Estimate:
    """Return the calls and cost the run would make (jobs already in `out` are free)."""
    chosen = run_options(options, backend, seed, workers, True)
    return estimate_generative(requests, Path(out), chosen)
