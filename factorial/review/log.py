"""Human review decisions of an output set: the `review.jsonl` log and what it says.

Each decision is one JSON line appended to `OUT/review.jsonl` and fsync'd
before it is acknowledged: who decided (reviewer), when (UTC), what (accept,
reject with a reason from a fixed list plus free text, flag, regenerate) and
about which image. A line that does not parse (a torn write after a crash)
or is not a valid decision (a `seconds` of `Infinity`, as an older version
could write) is skipped with a warning and counted, never failing the lines
after it, and the next append starts on a fresh line. The log holds strict
JSON: no `NaN` or `Infinity` is written or read. Every decision carries a
unique id, so a retried request is logged once.

The log is the source of truth. `ReviewState` folds it: each image's latest
decision per reviewer, adjudications, and regenerations (which point a job at
a new image; the old one stays on disk). `apply_review` lays that over
manifest rows, and `review_export_rows` over export rows, so decisions reach
the manifest and every export whatever rewrote the manifest in between.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
import math
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from itemshot.renderer.output import atomic_write_json

REVIEW_LOG = "review.jsonl"
LOG_VERSION = 1
# The most time a decision may say it took: longer than any real review (about 31 years),
# small enough that sums and means of many such times stay far from overflow.
MAX_SECONDS = 1e9

LOG = logging.getLogger(__name__)

# What an export does with images rejected in review: leave them out, or keep and mark them.
REJECTED_POLICIES = ("leave-out", "mark")

VERDICTS = ("accept", "reject", "flag")  # decisions that set an image's review status
# `undo` takes back one earlier decision (named by `undoes`): a new line, never an edit.
ACTIONS = (*VERDICTS, "regenerate", "undo")
# Why an accept was made without a person looking: the certified review's sample.
BASES = ("certified_by_sample",)
# The fields of each decision the manifest's `review` entry carries.
RECORD_FIELDS = ("reviewer", "action", "reason", "note", "time", "adjudication", "basis", "sample")
STATUS_OF = {"accept": "accepted", "reject": "rejected", "flag": "flagged"}
STATUSES = ("unreviewed", "accepted", "rejected", "flagged", "conflict")

# Why an image is rejected: a fixed list, so rejections can be counted and compared.
REJECT_REASONS: dict[str, str] = {
    "text_wrong": "question or option text differs from the source",
    "number_wrong": "a number, unit or formula is wrong",
    "option_wrong": "an option is missing, repeated or under the wrong letter",
    "figure_wrong": "a figure is missing, cropped, distorted or replaced",
    "unreadable": "text too small, blurred or too low in contrast to read",
    "layout_broken": "text clipped, overlapping or running off the page",
    "answer_leak": "the image gives the answer away",
    "presentation_wrong": "the scene or capture is not the one asked for",
    "other": "another problem (say which in the note)",
}

# Manifest fields a regeneration replaces (the new image's own values).
REPLACED_FIELDS = (
    "image",
    "image_sha256",
    "layout",
    "clean_image",
    "seed",
    "width",
    "height",
    "font_scale",
    "fonts_requested",
    "placeholders",
    "backend",
    "attempts",
    "fallback",
    "verdict",
    "verify",
    "regeneration",
)


class DecisionError(ValueError):
    """A decision that cannot be logged: names the field at fault."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"decision field {field!r}: {message}")


def utc_now() -> str:
    """Return the current UTC time as ISO 8601 with milliseconds (the log's clock)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Decision:
    """One reviewer's decision about one image.

    `seconds` is the time the reviewer spent on the image before deciding.
    An `adjudication` (made from the conflicts view) settles an image whatever
    the reviewers said. A `regenerate` decision carries `replacement`: the
    manifest fields of the new image that replaces `image` for this job.
    An `undo` names the decision it takes back in `undoes`. An accept with a
    `basis` (`certified_by_sample`) is the certified review's acceptance of a
    verifier-passed image outside its audit `sample` (the sample's id).
    Decisions made by one bulk action share a `batch` id.
    """

    id: str
    image: str
    action: str
    reviewer: str
    time: str
    job_key: str = ""
    item_id: str = ""
    reason: str = ""
    note: str = ""
    seconds: float | None = None
    adjudication: bool = False
    replacement: Mapping[str, Any] | None = None
    basis: str = ""
    sample: str = ""
    batch: str = ""
    undoes: str = ""

    def __post_init__(self) -> None:
        if not self.id or len(self.id) > 100:
            raise DecisionError("id", "must be 1 to 100 characters")
        if not self.image:
            raise DecisionError("image", "is empty")
        if self.action not in ACTIONS:
            raise DecisionError("action", f"{self.action!r} is not one of {', '.join(ACTIONS)}")
        if not self.reviewer or len(self.reviewer) > 100:
            raise DecisionError("reviewer", "must be 1 to 100 characters")
        if self.action == "reject" and self.reason not in REJECT_REASONS:
            raise DecisionError("reason", f"a rejection needs one of {', '.join(REJECT_REASONS)}")
        if self.reason and self.reason not in REJECT_REASONS:
            raise DecisionError("reason", f"{self.reason!r} is not a known reason")
        if self.action == "regenerate" and not (self.replacement or {}).get("image"):
            raise DecisionError("replacement", "a regeneration names its new image")
        if len(self.note) > 2000:
            raise DecisionError("note", "is longer than 2000 characters")
        if self.basis and (self.basis not in BASES or self.action != "accept"):
            raise DecisionError("basis", f"only an accept has a basis, one of {', '.join(BASES)}")
        if self.basis and not self.sample:
            raise DecisionError("sample", "an acceptance certified by sample names the sample")
        if (self.action == "undo") != bool(self.undoes):
            raise DecisionError("undoes", "an undo, and only an undo, names the decision it undoes")
        for name in ("sample", "batch", "undoes"):
            if len(getattr(self, name)) > 100:
                raise DecisionError(name, "is longer than 100 characters")
        if self.seconds is not None and not 0 <= self.seconds <= MAX_SECONDS:  # NaN fails too
            raise DecisionError("seconds", f"must be a finite number from 0 to {MAX_SECONDS:g}")

    @property
    def status(self) -> str:
        """Return the review status this decision gives its image (empty for regenerate)."""
        return STATUS_OF.get(self.action, "")

    def as_dict(self) -> dict[str, Any]:
        """Return the decision as its log record."""
        record: dict[str, Any] = {"v": LOG_VERSION}
        for spec in dataclasses.fields(self):
            value = getattr(self, spec.name)
            if value is None or value is False or value == "":
                continue
            record[spec.name] = dict(value) if spec.name == "replacement" else value
        return record

    def as_line(self) -> str:
        """Return the decision's log line: strict JSON (DecisionError names a field that is not)."""
        record = self.as_dict()
        try:
            return json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"
        except (ValueError, TypeError):
            for name, value in record.items():
                try:
                    json.dumps(value, allow_nan=False)
                except (ValueError, TypeError):
                    raise DecisionError(name, "holds a value JSON cannot carry") from None
            raise

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Decision:
        """Rebuild a decision from its log record; raise DecisionError or TypeError if unusable."""
        names = {spec.name for spec in dataclasses.fields(cls)}
        values = {k: v for k, v in record.items() if k in names}
        seconds = values.get("seconds")
        if seconds is not None and (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not 0 <= seconds <= MAX_SECONDS  # before float(): a huge integer cannot convert
        ):
            raise DecisionError("seconds", f"{seconds!r} is not a time in seconds")
        values["seconds"] = None if seconds is None else float(seconds)
        replacement = values.get("replacement")
        values["replacement"] = dict(replacement) if isinstance(replacement, Mapping) else None
        for name in ("id", "image", "action", "reviewer", "time", "job_key", "item_id"):
            values[name] = str(values.get(name) or "")
        for name in ("reason", "note", "basis", "sample", "batch", "undoes"):
            values[name] = str(values.get(name) or "")
        values["adjudication"] = bool(values.get("adjudication"))
        return cls(**values)


@dataclass(frozen=True)
class LogRead:
    """Decisions read from a log (in order, each id once) and the lines that were skipped."""

    decisions: tuple[Decision, ...]
    skipped: int = 0
    end: int = 0  # byte offset after the last complete line


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def loads_strict(line: bytes | str) -> Any:
    """Return one JSON text parsed strictly: `NaN`, `Infinity` and `1e999` raise ValueError."""
    try:
        return json.loads(line, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _parse_lines(
    data: bytes, seen: set[str], first_line: int = 1
) -> tuple[list[Decision], int, int, int]:
    """Return the decisions of the complete lines in `data`, lines skipped, bytes and lines consumed.

    `first_line` is the number of data's first line in the log, for the warnings.
    """
    decisions: list[Decision] = []
    skipped = 0
    consumed = data.rfind(b"\n") + 1  # an unfinished last line waits for its newline
    lines = data[:consumed].split(b"\n")[:-1]
    for number, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        try:
            record = loads_strict(line)
            if not isinstance(record, Mapping):
                raise ValueError("not a JSON object")
            decision = Decision.from_dict(record)
        except (ValueError, TypeError) as error:
            # One bad line costs that line only, whatever wrote it; the rest of the log counts.
            skipped += 1
            LOG.warning("%s line %d skipped: %s", REVIEW_LOG, number, _short(error))
            continue
        if decision.id in seen:
            continue  # the same decision logged twice counts once
        seen.add(decision.id)
        decisions.append(decision)
    return decisions, skipped, consumed, len(lines)


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= 200 else text[:200] + "…"


def read_decisions(out: Path) -> LogRead:
    """Return every decision in OUT/review.jsonl (none when there is no log)."""
    try:
        data = (out / REVIEW_LOG).read_bytes()
    except FileNotFoundError:
        return LogRead(())
    decisions, skipped, end, lines = _parse_lines(data, set())
    if end < len(data) and data[end:].strip():
        skipped += 1  # a torn last line, left by a crash mid-write
        LOG.warning("%s line %d skipped: unfinished (a write cut short)", REVIEW_LOG, lines + 1)
    return LogRead(tuple(decisions), skipped, end)


class ReviewLog:
    """The append side of OUT/review.jsonl, safe across threads and processes.

    `append` takes an exclusive lock on the file, reads what others appended
    since it last looked, refuses an id already logged, writes one line and
    fsyncs it; `sync` only reads. Both return the decisions new to this
    reader, in log order, so a caller can fold them into its own view.
    """

    def __init__(self, out: Path) -> None:
        self.path = out / REVIEW_LOG
        self._lock = threading.Lock()
        self._position = 0
        self._lines = 0  # complete lines read so far (numbers the warnings)
        self._ids: set[str] = set()
        self.skipped = 0

    @property
    def position(self) -> int:
        """Return the byte offset up to which this reader has read the log."""
        return self._position

    def knows(self, decision_id: str) -> bool:
        """Return whether a decision id is in the log as this reader last read it."""
        return decision_id in self._ids

    def sync(self) -> list[Decision]:
        """Return the decisions appended since the last call (by anyone)."""
        with self._lock:
            try:
                with self.path.open("rb") as handle:
                    return self._read_new(handle.fileno())
            except FileNotFoundError:
                return []

    def append(self, decision: Decision) -> tuple[bool, list[Decision]]:
        """Log `decision` durably; return (whether it was new, every decision new to this reader).

        When this returns, the line is on disk (fsync'd). An id already in the
        log is not written again.
        """
        written, new = self.append_many([decision])
        return written == 1, new

    def append_many(self, decisions: Sequence[Decision]) -> tuple[int, list[Decision]]:
        """Log many decisions with one lock and one fsync; return (lines written, new to reader).

        For a bulk action: each decision is its own line, ids already logged
        are not written again.
        """
        lines = [(d.id, d.as_line()) for d in decisions]
        with self._lock:
            created = not self.path.exists()
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                new = self._read_new(fd)
                fresh = [line for key, line in dict(lines).items() if key not in self._ids]
                if not fresh:
                    return 0, new
                data = "".join(fresh).encode("utf-8")
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data  # end a torn line first, so these parse
                _write_all(fd, data)
                os.fsync(fd)
                if created:
                    _fsync_dir(self.path.parent)
                new += self._read_new(fd)
                return len(fresh), new
            finally:
                os.close(fd)  # closing releases the lock

    def _read_new(self, fd: int) -> list[Decision]:
        size = os.fstat(fd).st_size
        if size <= self._position:
            return []
        data = os.pread(fd, size - self._position, self._position)
        decisions, skipped, consumed, lines = _parse_lines(data, self._ids, self._lines + 1)
        self._position += consumed
        self._lines += lines
        self.skipped += skipped
        return decisions


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@dataclass
class ImageReview:
    """What the reviewers said about one image: each one's latest verdict, any adjudication."""

    image: str
    votes: dict[str, Decision] = field(default_factory=dict)
    adjudication: Decision | None = None
    # The verdict decisions in effect (not undone), in log order: what votes are folded from.
    history: list[Decision] = field(default_factory=list)

    def fold(self) -> None:
        """Set the votes and the adjudication from the decisions in effect."""
        self.votes = {}
        self.adjudication = None
        for decision in self.history:
            if decision.adjudication:
                self.adjudication = decision
            else:
                self.votes[decision.reviewer] = decision

    @property
    def status(self) -> str:
        """Return unreviewed, accepted, rejected, flagged, or conflict (reviewers disagree)."""
        if self.adjudication is not None:
            return self.adjudication.status
        statuses = {vote.status for vote in self.votes.values()}
        if not statuses:
            return "unreviewed"
        return statuses.pop() if len(statuses) == 1 else "conflict"

    @property
    def excluded(self) -> bool:
        """Return whether exports leave the image out: rejected, or a conflict with a rejection.

        A disagreement is settled by an adjudication; until then a rejection
        by anyone keeps the image out (the conservative reading).
        """
        status = self.status
        return status == "rejected" or (
            status == "conflict" and any(v.action == "reject" for v in self.votes.values())
        )

    @property
    def reason(self) -> str:
        """Return the rejection reason that decides the status (empty when not rejected)."""
        if self.adjudication is not None:
            return self.adjudication.reason
        return next((v.reason for v in self.votes.values() if v.action == "reject"), "")

    def as_record(self) -> dict[str, Any]:
        """Return the manifest `review` entry: status, reason, and each decision that counts."""
        decisions = [*self.votes.values()]
        if self.adjudication is not None:
            decisions.append(self.adjudication)
        return {
            "status": self.status,
            "reason": self.reason,
            "decisions": [
                {k: v for k, v in d.as_dict().items() if k in RECORD_FIELDS} for d in decisions
            ],
        }


@dataclass
class ReviewState:
    """The log folded: every image's review, and the regenerations of each job."""

    images: dict[str, ImageReview] = field(default_factory=dict)
    replacements: dict[str, Decision] = field(default_factory=dict)  # old image -> regeneration
    decisions: list[Decision] = field(default_factory=list)
    undone: set[str] = field(default_factory=set)  # ids of decisions taken back
    _by_id: dict[str, Decision] = field(default_factory=dict, repr=False)

    @classmethod
    def from_log(cls, out: Path) -> ReviewState:
        """Return the state of OUT/review.jsonl."""
        state = cls()
        state.add(read_decisions(out).decisions)
        return state

    def add(self, decisions: Iterable[Decision]) -> None:
        """Fold decisions in log order (a later decision by the same reviewer replaces theirs)."""
        for decision in decisions:
            self.decisions.append(decision)
            self._by_id[decision.id] = decision
            if decision.action == "regenerate":
                self.replacements[decision.image] = decision
                continue
            if decision.action == "undo":
                self._undo(decision)
                continue
            review = self.images.setdefault(decision.image, ImageReview(decision.image))
            review.history.append(decision)
            if decision.adjudication:
                review.adjudication = decision
            else:
                review.votes[decision.reviewer] = decision

    def _undo(self, undo: Decision) -> None:
        """Take back a verdict decision: the image's review is as if it had not been made."""
        taken = self._by_id.get(undo.undoes)
        if taken is None or taken.action not in VERDICTS or taken.id in self.undone:
            return  # nothing (or nothing undoable) by that id: the line changes nothing
        self.undone.add(taken.id)
        review = self.images.get(taken.image)
        if review is not None:
            review.history = [d for d in review.history if d.id != taken.id]
            review.fold()

    def last_decision(self, reviewer: str) -> Decision | None:
        """Return the reviewer's latest verdict decision still in effect (what `u` undoes)."""
        for decision in reversed(self.decisions):
            if (
                decision.reviewer == reviewer
                and decision.action in VERDICTS
                and decision.id not in self.undone
            ):
                return decision
        return None

    def in_batch(self, batch: str) -> list[Decision]:
        """Return the decisions of one bulk action still in effect."""
        return [
            d
            for d in self.decisions
            if batch and d.batch == batch and d.action in VERDICTS and d.id not in self.undone
        ]

    def snapshot(self) -> ReviewState:
        """Return a copy that later `add` calls on this state leave unchanged."""
        return ReviewState(
            images={
                image: ImageReview(
                    image, dict(review.votes), review.adjudication, list(review.history)
                )
                for image, review in self.images.items()
            },
            replacements=dict(self.replacements),
            decisions=list(self.decisions),
            undone=set(self.undone),
            _by_id=dict(self._by_id),
        )

    def review_of(self, image: str) -> ImageReview:
        """Return the review of an image (unreviewed when nobody decided)."""
        return self.images.get(image) or ImageReview(image)

    def chain(self, image: str) -> list[Decision]:
        """Return the regenerations that followed `image`, oldest first."""
        chain: list[Decision] = []
        seen = {image}
        while (step := self.replacements.get(image)) is not None:
            image = str((step.replacement or {})["image"])
            if image in seen:
                break  # a cycle cannot come from the app; stop rather than loop
            seen.add(image)
            chain.append(step)
        return chain

    def current_image(self, image: str) -> str:
        """Return the image that now stands for the job whose image was `image`."""
        chain = self.chain(image)
        return str((chain[-1].replacement or {})["image"]) if chain else image

    def __bool__(self) -> bool:
        return bool(self.decisions)


def replaced_row(row: Mapping[str, Any], state: ReviewState) -> dict[str, Any]:
    """Return a manifest row with its regenerations applied (image and its verdict replaced)."""
    result = dict(row)
    image = result.get("image")
    if not image:
        return result
    chain = state.chain(str(image))
    if chain:
        previous = list(result.get("previous_images") or [])
        for step in chain:
            previous.append(step.image)
            replacement = dict(step.replacement or {})
            for name in REPLACED_FIELDS:
                if name in replacement:
                    result[name] = replacement[name]
                else:
                    result.pop(name, None)
        result["previous_images"] = previous
    return result


def apply_review(rows: Iterable[Mapping[str, Any]], state: ReviewState) -> Iterator[dict[str, Any]]:
    """Yield manifest rows with regenerations applied and a `review` entry on each image row."""
    for row in rows:
        result = replaced_row(row, state)
        if result.get("image") and result.get("status") == "ok":
            result["review"] = state.review_of(str(result["image"])).as_record()
        yield result


REVIEW_MARKS = "review.json"


@dataclass(frozen=True)
class ReviewedRows:
    """Export rows after review: which remain, and how many of each review status there were."""

    rows: list[Any]
    counts: dict[str, int]
    left_out: int
    policy: str
    marks: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Return the counts as the export summary reports them."""
        return {"policy": self.policy, "left_out": self.left_out, **self.counts}


def review_export_rows(out: Path, rows: Sequence[Any], rejected: str = "leave-out") -> ReviewedRows:
    """Return export rows with the review applied: regenerated images swapped in, rejected ones
    left out (`leave-out`) or kept and listed with their status (`mark`).

    Rows are the exporters' rows (`key`, `image` as a path under `out`); rows
    without an image (text formats) pass through. With no log, nothing changes.
    """
    if rejected not in REJECTED_POLICIES:
        raise ValueError(f"rejected must be one of {', '.join(REJECTED_POLICIES)}")
    state = ReviewState.from_log(out)
    if not state:
        return ReviewedRows(list(rows), {}, 0, rejected)
    kept: list[Any] = []
    counts = dict.fromkeys(STATUSES, 0)
    marks: list[dict[str, Any]] = []
    left_out = 0
    for row in rows:
        image = getattr(row, "image", None)
        if image is None:
            kept.append(row)
            continue
        try:
            relative = Path(image).relative_to(out).as_posix()
        except ValueError:
            kept.append(row)  # not an image of this set: nothing was decided about it
            continue
        current = state.current_image(relative)
        review = state.review_of(current)
        counts[review.status] += 1
        if current != relative:
            row = dataclasses.replace(row, image=out / current)
        if review.excluded and rejected == "leave-out":
            left_out += 1
            continue
        kept.append(row)
        marks.append(
            {
                "id": row.key,
                "item_id": getattr(row, "item_id", ""),
                "image": current,
                "status": review.status,
                "excluded": review.excluded,
                "reason": review.reason,
            }
        )
    return ReviewedRows(kept, counts, left_out, rejected, marks)


def write_review_marks(dest: Path, reviewed: ReviewedRows) -> Path:
    """Write DEST/review.json: the policy, the counts, and every exported image's review status."""
    path = dest / REVIEW_MARKS
    atomic_write_json(path, {**reviewed.summary(), "rows": reviewed.marks})
    return path
