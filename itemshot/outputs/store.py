"""The files of an output set's record: `manifest.jsonl` and `summary.json`, read and written.

This module is the only writer of both files and the only reader of the
manifest. Every write is atomic (a temp file renamed over the old one, with
the user's normal file mode) and every write of rows merges: a row that
matches a row already in the manifest (same `job_key`; rows without one by
item id and condition) takes the fields its writer owns from the new row and
keeps every other field of the old one. Verdicts are bound to the image
bytes they judged: an old verdict is kept only while the row's image has the
same sha256 (`image_sha256`) as the bytes the verdict was about
(`verify.image_sha256`); review fields only while the row shows the same
image file with the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from itemshot.outputs.rows import (
    RENDER_FIELDS,
    REVIEW_FIELDS,
    SCHEMA_VERSION,
    VERDICT_FIELDS,
    ManifestRow,
    ManifestRowError,
    as_row,
)
from itemshot.renderer.output import atomic_write_json, file_mode, temp_prefix, write_jsonl
from itemshot.renderer.seeds import canonical_json

MANIFEST = "manifest.jsonl"
SUMMARY = "summary.json"
# What a verification writes: the verdict, and the hash of the bytes it judged.
VERDICT_OWNER = frozenset({*VERDICT_FIELDS, "image_sha256"})

log = logging.getLogger("itemshot.outputs")


@dataclass(frozen=True)
class ManifestProblem:
    """A manifest line that is not a row: its number, its byte offset and why."""

    line: int
    offset: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class Manifest:
    """The rows of an output set's manifest, in file order, and the lines that were not rows.

    `lines` holds the 1-based line number of each row, for messages that name it.
    """

    path: Path
    rows: tuple[ManifestRow, ...]
    problems: tuple[ManifestProblem, ...] = ()
    lines: tuple[int, ...] = ()

    def __repr__(self) -> str:
        return f"Manifest({str(self.path)!r}, {len(self.rows)} rows, {len(self.problems)} problems)"


def manifest_path(out: Path) -> Path:
    """Return the path of an output folder's manifest."""
    return Path(out) / MANIFEST


def summary_path(out: Path) -> Path:
    """Return the path of an output folder's run summary."""
    return Path(out) / SUMMARY


# -- reading --------------------------------------------------------------------


def scan_manifest(
    out: Path, problems: list[ManifestProblem] | None = None
) -> Iterator[tuple[int, ManifestRow]]:
    """Yield (byte offset of its line, row) for every row of OUT's manifest, in file order.

    A line that is not a row (broken JSON, a cut-off last line, a value that
    is no row) is appended to `problems` (logged when None) and skipped.
    FileNotFoundError when OUT has no manifest.
    """
    for _, offset, row in _scan(out, problems):
        yield offset, row


def _scan(
    out: Path, problems: list[ManifestProblem] | None
) -> Iterator[tuple[int, int, ManifestRow]]:
    """Yield (line number, byte offset, row) for every row; see `scan_manifest`."""
    path = manifest_path(out)
    if not path.is_file():
        raise FileNotFoundError(f"no {MANIFEST} in {out}")
    with path.open("rb") as handle:
        offset = 0
        for number, line in enumerate(handle, start=1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                yield number, start, ManifestRow.from_json(json.loads(line))
            except (ValueError, ManifestRowError) as error:
                problem = ManifestProblem(number, start, _short(error))
                if problems is None:
                    log.warning("%s: skipped %s", path, problem)
                else:
                    problems.append(problem)


def load_manifest(out: Path) -> Manifest:
    """Return OUT's manifest: its rows and the lines that were not rows (nothing raised for them)."""
    problems: list[ManifestProblem] = []
    found = list(_scan(out, problems))
    rows = tuple(row for _, _, row in found)
    lines = tuple(number for number, _, _ in found)
    return Manifest(manifest_path(out), rows, tuple(problems), lines)


def read_manifest(out: Path) -> list[ManifestRow]:
    """Return the rows of OUT's manifest in file order; lines that are not rows are logged.

    FileNotFoundError when OUT has no manifest.
    """
    manifest = load_manifest(out)
    for problem in manifest.problems:
        log.warning("%s: skipped %s", manifest.path, problem)
    return list(manifest.rows)


def read_row_at(out: Path, offset: int) -> ManifestRow:
    """Return the row whose line starts at byte `offset` (from `scan_manifest`)."""
    with manifest_path(out).open("rb") as handle:
        handle.seek(offset)
        return ManifestRow.from_json(json.loads(handle.readline()))


def read_summary(out: Path) -> dict[str, Any]:
    """Return OUT's run summary (empty when there is none or it is unreadable)."""
    try:
        value = json.loads(summary_path(out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return dict(value) if isinstance(value, Mapping) else {}


# -- writing --------------------------------------------------------------------


def write_manifest(
    out: Path,
    rows: Iterable[ManifestRow | Mapping[str, Any]],
    *,
    owns: Iterable[str] = RENDER_FIELDS,
    base: Iterable[ManifestRow] | None = None,
) -> Path:
    """Write `rows` as OUT's manifest, in their order, merged with the rows already there.

    `owns` names the fields the writer is the source of: for a row that
    matches an old row, those come from the new row only (absent means
    removed); every other field the new row lacks is kept from the old row,
    verdicts only for the same image bytes, review fields only for the same
    image. Old rows that match no new row are not written. `base` gives the
    old rows instead of the manifest on disk (a writer that wrote part of the
    set in between). Returns the path.
    """
    path = manifest_path(out)
    new = [as_row(row) for row in rows]
    if base is None:
        base = _old_rows(out) if path.is_file() else ()
    old = list(base)
    merged = merge_rows(old, new, frozenset(owns))
    write_jsonl(path, [row.to_json() for row in merged])
    return path


def write_summary(out: Path, summary: Mapping[str, Any]) -> Path:
    """Write OUT's run summary (`summary.json`) atomically; return its path."""
    path = summary_path(out)
    atomic_write_json(path, dict(summary))
    return path


class ManifestDraft:
    """A whole new manifest written row by row beside the current one, put in place by `commit`.

    For a writer that rewrites every row it read (the review, applying its
    log) and must know where each line starts. Used as a context manager, a
    draft that was not committed is removed.
    """

    def __init__(self, out: Path) -> None:
        self.path = manifest_path(out)
        handle, temp = tempfile.mkstemp(prefix=temp_prefix(), dir=self.path.parent)
        self.temp = Path(temp)
        self._stream = os.fdopen(handle, "wb")
        self._size = 0
        self.done = False

    def add(self, row: ManifestRow | Mapping[str, Any]) -> int:
        """Write one row; return the byte offset its line starts at."""
        data = (_line(as_row(row)) + "\n").encode("utf-8", "backslashreplace")
        start = self._size
        self._stream.write(data)
        self._size += len(data)
        return start

    def commit(self) -> None:
        """Put the draft in place of the manifest (flushed to disk first)."""
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self._stream.close()
        os.chmod(self.temp, file_mode())
        os.replace(self.temp, self.path)
        self.done = True

    def discard(self) -> None:
        """Remove the draft; the manifest stays as it was."""
        if not self._stream.closed:
            self._stream.close()
        self.temp.unlink(missing_ok=True)
        self.done = True

    def __enter__(self) -> ManifestDraft:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if not self.done:
            self.discard()


# -- merging --------------------------------------------------------------------


def with_earlier(
    current: Iterable[ManifestRow], earlier: Iterable[ManifestRow]
) -> list[ManifestRow]:
    """Return `current` and then the `earlier` rows whose key `current` lacks (a merge base)."""
    rows = list(current)
    keys = {row_key(row) for row in rows}
    return rows + [row for row in earlier if row_key(row) not in keys]


def row_key(row: ManifestRow) -> tuple[str, ...]:
    """Return the key a row is matched by across writes: its job key, else item and condition."""
    if row.job_key:
        return ("job", row.job_key)
    return ("row", row.item_id, canonical_json(dict(row.condition or {})))


def merge_rows(
    old: Iterable[ManifestRow], new: Iterable[ManifestRow], owns: frozenset[str]
) -> list[ManifestRow]:
    """Return the new rows, each merged with the old row of the same key (matched in order)."""
    waiting: dict[tuple[str, ...], deque[ManifestRow]] = defaultdict(deque)
    for row in old:
        waiting[row_key(row)].append(row)
    merged = []
    for row in new:
        queue = waiting.get(row_key(row))
        merged.append(merge_row(queue.popleft(), row, owns) if queue else _stamped(row))
    return merged


def merge_row(old: ManifestRow, new: ManifestRow, owns: frozenset[str]) -> ManifestRow:
    """Return `new` with the fields it lacks and does not own taken from `old` (see module doc)."""
    record = new.to_json()
    carry_verdict = (
        not any(name in record for name in VERDICT_FIELDS)
        and old.verdict_sha256 is not None
        and old.verdict_sha256 == new.image_sha256
    )
    same_image = (
        old.image is not None
        and old.image == new.image
        and old.image_sha256 is not None
        and old.image_sha256 == new.image_sha256
    )
    for name, value in old.to_json().items():
        if name in record or name in owns:
            continue
        if name in VERDICT_FIELDS and not carry_verdict:
            continue
        if name in REVIEW_FIELDS and not same_image:
            continue
        record[name] = value
    return _stamped(ManifestRow.from_json(record))


def _stamped(row: ManifestRow) -> ManifestRow:
    return row if row.schema == SCHEMA_VERSION else row.with_fields(schema=SCHEMA_VERSION)


def _old_rows(out: Path) -> Iterator[ManifestRow]:
    for _, row in scan_manifest(out):
        yield row


# -- image bytes ----------------------------------------------------------------


def bytes_sha256(data: bytes) -> str:
    """Return the sha256 hex digest of image bytes (the key verdicts are bound to)."""
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    """Return the sha256 hex digest of a file's bytes."""
    with Path(path).open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _line(row: ManifestRow) -> str:
    return json.dumps(row.to_json(), sort_keys=True, ensure_ascii=False)


def _short(error: Exception) -> str:
    return str(error)[:200]
