"""The records the Python API returns: items, runs and their results, short to print.

Each record prints as one line (no figure bytes), says its status by name, and
offers its table as `rows` (a list of dicts) and `to_pandas()` (pandas is
optional: the call says how to install it when it is missing).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from itemshot.renderer.items import Item, ItemError
    from itemshot.verify import AuditSummary


class RunStatus(enum.IntEnum):
    """How a run ended; the value is the command line's exit status for the same run."""

    OK = 0
    USAGE = 2  # unusable arguments, dataset or sources
    SOME_FAILED = 3  # some items failed; the others are written
    UNVERIFIED = 4  # all written, some images failed the audit
    STOPPED = 5  # a system error (disk full, permissions) stopped the run part-way
    INTERRUPTED = 130  # Ctrl-C (SIGINT); 128 + the signal's number, as a shell reports it
    TERMINATED = 143  # SIGTERM

    @property
    def label(self) -> str:
        """Return the status's name in lower case (`some_failed`)."""
        return self.name.lower()

    def __str__(self) -> str:
        # A notebook's print(run.status) should say what happened, not a bare exit code.
        return f"{self.label} ({self.value})"

    def __format__(self, spec: str) -> str:
        # f"{status}" reads like str(status), as Python 3.12 does for every enum.
        return format(str(self), spec)


def to_pandas(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Return rows of dicts as a pandas DataFrame (pandas is an optional dependency)."""
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "to_pandas() needs pandas, which itemshot does not install: pip install pandas "
            "(or use .rows, a list of dicts)"
        ) from None
    return pandas.DataFrame([dict(row) for row in rows])


def _counts(rows: Iterable[Mapping[str, Any]], key: str) -> str:
    counted = Counter(str(row.get(key)) for row in rows)
    return ", ".join(f"{count} {name}" for name, count in sorted(counted.items()))


class Items(list["Item"]):
    """The items of a dataset in file order, with the rows that failed their checks.

    A list of `Item`; `errors` holds one `ItemError` (item id, field, message)
    per bad row, `entries` both in file order, and `render` records the
    errors in the manifest where the rows stood.
    """

    def __init__(
        self, entries: Iterable[Item | ItemError] = (), *, format: str = "", source: str = ""
    ) -> None:
        """Keep the entries in file order; the list holds the good items."""
        from itemshot.renderer.items import Item

        self.entries: tuple[Item | ItemError, ...] = tuple(entries)
        super().__init__(e for e in self.entries if isinstance(e, Item))
        self.errors = tuple(e for e in self.entries if not isinstance(e, Item))
        self.format = format
        self.source = source

    def __repr__(self) -> str:
        """Return one line: how many items, from where, and how many rows failed."""
        where = f" from {Path(self.source).name}" if self.source else ""
        how = f" ({self.format})" if self.format else ""
        bad = f", {len(self.errors)} bad rows" if self.errors else ""
        return f"Items({len(self)} items{where}{how}{bad})"

    __str__ = __repr__

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Return one dict per dataset row: id, status, options, answer, figures or the error."""
        from itemshot.renderer.items import Item

        table: list[dict[str, Any]] = []
        for entry in self.entries:
            if isinstance(entry, Item):
                table.append(
                    {
                        "item_id": entry.id,
                        "status": "ok",
                        "question": entry.question,
                        "n_options": len(entry.options),
                        "answer": entry.answer_letter,
                        "figures": len(entry.figures),
                        "subject": entry.subject,
                        "language": entry.language,
                        "field": None,
                        "error": None,
                    }
                )
            else:
                table.append(
                    {"item_id": entry.item_id, "status": "failed"}
                    | {"field": entry.field, "error": entry.message}
                )
        return table

    def to_pandas(self) -> pd.DataFrame:
        """Return `rows` as a pandas DataFrame."""
        return to_pandas(self.rows)


@dataclass(frozen=True, repr=False)
class RunResult:
    """A finished render: where it is, its exit status, its manifest rows and summaries.

    `status` is a `RunStatus` whose value is the command line's exit status for
    the same run (OK all rendered and verified, SOME_FAILED some items failed,
    UNVERIFIED some images failed the audit).
    """

    out: Path
    status: RunStatus
    rows: tuple[Mapping[str, Any], ...]
    summary: Mapping[str, Any]
    render: Any = None  # the pipeline's RunSummary (counts, failures, time)
    audit: AuditSummary | None = None

    def __post_init__(self) -> None:
        """Hold the status as a `RunStatus` whatever int it was given as."""
        object.__setattr__(self, "status", RunStatus(int(self.status)))

    def __repr__(self) -> str:
        """Return one line: folder, status, rows by status, audit counts."""
        audit = ""
        if self.audit is not None:
            audit = f", verified {self.audit.passed}/{self.audit.total} passed"
        rows = _counts(self.rows, "status") or "no rows"
        return f"RunResult({str(self.out)!r}, status={self.status.label}, {rows}{audit})"

    @property
    def images(self) -> list[Path]:
        """Return the paths of every image written, in manifest order."""
        return [self.out / row["image"] for row in self.rows if row.get("image")]

    @property
    def failed(self) -> list[Mapping[str, Any]]:
        """Return the manifest rows of the jobs that failed, with their errors."""
        return [row for row in self.rows if row.get("status") != "ok"]

    def to_pandas(self) -> pd.DataFrame:
        """Return the manifest rows as a pandas DataFrame."""
        return to_pandas(self.rows)


@dataclass(frozen=True, repr=False)
class SweepRun:
    """A finished sweep: its folder, plan counts, balance report, result and manifest rows."""

    out: Path
    counts: Mapping[str, int]
    cells: int
    inconsistencies: int
    balance: Any  # a factorial BalanceReport
    result: Any  # the sweep's SweepResult (rows, text rows, failures, render counts)
    name: str = ""
    design_type: str = ""
    rows: tuple[Mapping[str, Any], ...] = ()
    audit: VerifyResult | None = None  # with `verify=True`
    confounds: Any = None  # a factorial ConfoundReport of the rendered images

    @property
    def status(self) -> RunStatus:
        """Return the exit status: OK, SOME_FAILED (rows failed), UNVERIFIED (images failed)."""
        if self.result.failed_rows:
            return RunStatus.SOME_FAILED
        if self.audit is not None and self.audit.failed:
            return RunStatus.UNVERIFIED
        return RunStatus.OK

    def __repr__(self) -> str:
        """Return one line: design, folder, status, cells, rows and audit counts."""
        audit = ""
        if self.audit is not None:
            audit = f", verified {self.audit.passed}/{self.audit.total} passed"
        return (
            f"SweepRun({self.name or 'sweep'!r} in {str(self.out)!r}, status={self.status.label}, "
            f"{self.cells} cells, {self.result.rows} rows, {self.result.failed_rows} failed{audit})"
        )

    def to_pandas(self) -> pd.DataFrame:
        """Return the manifest rows as a pandas DataFrame."""
        return to_pandas(self.rows)


@dataclass(frozen=True, repr=False)
class VerifyResult:
    """A verification's `AuditSummary` (its fields read through) and one row per image.

    `total`, `passed`, `failed`, `by_reason`, `report_html`, `as_dict()` … are
    the summary's; `rows` lists each verified image with its verdict and reasons.
    """

    summary: AuditSummary
    rows: tuple[Mapping[str, Any], ...] = ()

    def __getattr__(self, name: str) -> Any:
        """Read the summary's fields and methods (total, passed, failed, as_dict, …)."""
        if name == "summary":  # not yet set (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.summary, name)

    def __repr__(self) -> str:
        """Return one line: images, passed, failed, the commonest reasons."""
        summary = self.summary
        reasons = sorted(summary.by_reason.items(), key=lambda kv: -kv[1])[:3]
        listed = f" ({', '.join(f'{k} {v}' for k, v in reasons)})" if reasons else ""
        return (
            f"VerifyResult({summary.total} images: {summary.passed} passed, "
            f"{summary.failed} failed{listed})"
        )

    def to_pandas(self) -> pd.DataFrame:
        """Return the per-image rows as a pandas DataFrame."""
        return to_pandas(self.rows)


def verify_rows(manifest: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Any], ...]:
    """Return one row per image of a manifest that carries a verdict."""
    table: list[dict[str, Any]] = []
    for row in manifest:
        if not row.get("verdict"):
            continue
        found = row.get("verify") or {}
        table.append(
            {
                "image": row.get("image"),
                "item_id": row.get("item_id"),
                "verdict": row.get("verdict"),
                "codes": list(found.get("codes") or ()),
                "mode": found.get("mode"),
                "condition": dict(row.get("condition") or {}),
            }
        )
    return tuple(table)


@dataclass(frozen=True, repr=False)
class Analysis:
    """An analysis's `AnalysisResults` (its fields read through) with one row per run and cell.

    `runs`, `parser`, `models`, `run(name)` … are the results'; `results` is
    the record itself (what `write_report` takes); `rows` lists each run's
    cells with accuracy, interval, n and unparsed counts.
    """

    results: Any  # a factorial AnalysisResults
    paths: tuple[Path, ...] = ()  # the report files written, when a report was asked for

    def __getattr__(self, name: str) -> Any:
        """Read the results' fields and methods (runs, parser, run(name), …)."""
        if name == "results":  # not yet set (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.results, name)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Return one dict per run × cell: accuracy with its 95% interval and counts."""
        table: list[dict[str, Any]] = []
        for run in self.results.runs:
            for cell in run.cells:
                accuracy = cell.accuracy
                table.append(
                    {
                        "run": run.run,
                        "model": run.model,
                        "prompt": run.prompt,
                        "cell": cell.label,
                        "format": cell.format,
                        "n_options": cell.n_options,
                        "n": accuracy.n,
                        "correct": accuracy.correct,
                        "accuracy": accuracy.rate,
                        "low": accuracy.low,
                        "high": accuracy.high,
                        "unparsed": cell.unparsed,
                        "fallback": cell.fallback,
                        "request_errors": cell.request_errors,
                    }
                )
        return table

    def to_pandas(self) -> pd.DataFrame:
        """Return `rows` as a pandas DataFrame."""
        return to_pandas(self.rows)

    def __repr__(self) -> str:
        """Return one line: parser, runs and predictions."""
        results = self.results
        names = ", ".join(run.run for run in results.runs[:3])
        more = f" and {len(results.runs) - 3} more" if len(results.runs) > 3 else ""
        return (
            f"Analysis(parser={results.parser!r}, {len(results.runs)} runs ({names}{more}), "
            f"{results.n_predictions} predictions)"
        )
