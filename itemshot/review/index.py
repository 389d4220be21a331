"""The review index: an output set's images as columns, built once, filtered without a scan.

At server start the manifest is read once: each image row becomes an entry
with its byte offset (the item view reads that one line back) and its facets
(verdict, reason codes, scene, subject, backend, capture) as integer codes in
numpy arrays; the review log adds each entry's status and reviewers. A queue
page is then a few vectorised mask operations over those columns, whatever
the set's size, and a decision updates one entry. The queue order is
verifier failures first, then manifest order; decided images leave the
default (unreviewed) queue, so after a restart it resumes where it stopped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from itemshot.factorial.review.log import (
    STATUSES,
    Decision,
    ReviewLog,
    ReviewState,
    apply_review,
    replaced_row,
)
from itemshot.outputs import ManifestDraft, manifest_path, read_row_at, scan_manifest
from itemshot.renderer.output import atomic_write_json
from itemshot.review.certify import Assessment, Sample, SetState, assess, read_sample
from itemshot.review.records import presentation_of, read_json, reason_codes, verdict_of

VERDICT_CODES = ("fail", "pass", "unverified")
# The design factors (format, n_options, font, capture, severity) beside scene, subject, backend.
FACETS = ("scene", "subject", "backend", "format", "n_options", "font", "capture", "severity")
# The certified review's sample filter: the drawn sample, the passes outside it, the rest.
SAMPLE_FILTERS = ("by-hand", "sample", "unsampled")  # codes 0, 1, 2 of `sample_column`
PAGE_SIZE = 48
ANY = ""
# The status filter's values: the statuses, plus every image.
STATUS_FILTERS = (*STATUSES, "all")
# What the manifest last had written into it (so a restart need not rewrite it again).
APPLIED = ".review-manifest.json"


@dataclass(frozen=True)
class Query:
    """A queue filter: status (default unreviewed), verdict, reason, facets, reviewer, page."""

    status: str = "unreviewed"
    verdict: str = ANY
    reason: str = ANY
    scene: str = ANY
    subject: str = ANY
    backend: str = ANY
    format: str = ANY
    n_options: str = ANY
    font: str = ANY
    capture: str = ANY
    severity: str = ANY
    sample: str = ANY
    reviewer: str = ANY
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Query:
        """Return the query of URL parameters (unknown parameters ignored, bad pages → 1)."""
        values: dict[str, Any] = {}
        for name in ("verdict", "reason", *FACETS, "sample", "reviewer"):
            values[name] = str(params.get(name, ANY))[:200]
        status = str(params.get("status", "unreviewed"))
        values["status"] = status if status in STATUS_FILTERS else "unreviewed"
        try:
            values["page"] = max(1, int(params.get("page", "1")))
        except ValueError:
            values["page"] = 1
        return cls(**values)

    def params(self, **changes: Any) -> dict[str, str]:
        """Return the query (with changes) as URL parameters, leaving defaults out."""
        query = replace(self, **changes)
        out: dict[str, str] = {}
        for name, default in vars(Query()).items():
            value = getattr(query, name)
            if value != default:
                out[name] = str(value)
        return out

    def filters(self) -> tuple[Any, ...]:
        """Return the filter part of the query (everything but the page)."""
        return tuple(v for k, v in vars(self).items() if k != "page")


@dataclass(frozen=True)
class Page:
    """One page of the queue: entry positions, the match count, and where the page is."""

    entries: tuple[int, ...]
    total: int
    page: int
    pages: int


@dataclass(frozen=True)
class Entry:
    """The index's view of one image row (facets, status and where its line is)."""

    position: int
    item_id: str
    image: str
    job_key: str
    verdict: str
    status: str
    codes: tuple[str, ...]
    facets: Mapping[str, str]
    reviewers: tuple[str, ...]
    sample: str = ""  # by-hand, sample or unsampled once an audit sample is drawn


class _Vocabulary:
    """String values of one facet ↔ small integer codes."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.codes: dict[str, int] = {}

    def code(self, value: str) -> int:
        found = self.codes.get(value)
        if found is None:
            found = self.codes[value] = len(self.values)
            self.values.append(value)
        return found


class ReviewIndex:
    """The images of an output set with their facets and review state, for fast queues.

    Thread-safe: request handlers read it while decisions update it.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.manifest = manifest_path(out)
        self.log = ReviewLog(out)
        self._lock = threading.RLock()
        self.version = 0
        self._cache: dict[tuple[Any, ...], np.ndarray] = {}
        self.dirty = False  # decisions not yet written into the manifest
        self.build()

    # -- building ---------------------------------------------------------------

    def build(self) -> None:
        """Read the manifest and the review log from scratch into the columns."""
        with self._lock:
            self.state = ReviewState()
            self.log = ReviewLog(self.out)
            self.state.add(self.log.sync())
            self.skipped_lines = self.log.skipped
            offsets: list[int] = []
            self.item_ids: list[str] = []
            self.images: list[str] = []
            self.job_keys: list[str] = []
            self.rows_total = 0
            self.not_rendered = 0
            verdicts: list[int] = []
            facet_codes: dict[str, list[int]] = {name: [] for name in FACETS}
            self.facets = {name: _Vocabulary() for name in FACETS}
            self.reason_vocab = _Vocabulary()
            code_lists: list[list[int]] = []
            # Taken before reading: a manifest replaced meanwhile is then read again.
            self._identity = os.stat(self.manifest)
            for start, stored in scan_manifest(self.out):
                self.rows_total += 1
                row = replaced_row(stored, self.state)
                if row.get("status") != "ok" or not row.get("image"):
                    self.not_rendered += 1
                    continue
                offsets.append(start)
                self.item_ids.append(str(row.get("item_id") or ""))
                self.images.append(str(row["image"]))
                self.job_keys.append(str(row.get("job_key") or ""))
                verdicts.append(VERDICT_CODES.index(verdict_of(row)))
                for name, value in _facet_values(row).items():
                    facet_codes[name].append(self.facets[name].code(value))
                code_lists.append([self.reason_vocab.code(c) for c in reason_codes(row)])
            size = len(offsets)
            self.offsets = np.asarray(offsets, dtype=np.int64)
            self.verdicts = np.asarray(verdicts, dtype=np.int8)
            self.facet_columns = {
                name: np.asarray(codes, dtype=np.int32) for name, codes in facet_codes.items()
            }
            self.reasons = np.zeros((len(self.reason_vocab.values), size), dtype=bool)
            for position, codes in enumerate(code_lists):
                self.reasons[codes, position] = True
            self.position_of = {image: p for p, image in enumerate(self.images)}
            self.statuses = np.zeros(size, dtype=np.int8)
            self.reviewer_masks: dict[str, np.ndarray] = {}
            for position, image in enumerate(self.images):
                self._refresh_review(position, image)
            try:
                sample = read_sample(self.out)
            except ValueError:
                sample = None  # an unreadable sample file: the certify page says so
            self._set_sample(sample)
            self._order()
            self._changed()

    def set_sample(self, sample: Sample | None) -> None:
        """Mark the entries of a (new or grown) audit sample, for the sample filter."""
        with self._lock:
            self._set_sample(sample)
            self._changed()

    def _set_sample(self, sample: Sample | None) -> None:
        self.sample = sample
        self.sample_column = np.zeros(len(self.images), dtype=np.int8)
        if sample is None:
            return
        drawn = set(sample.drawn)
        for image in sample.unsampled:
            if (position := self.position_of.get(image)) is not None:
                self.sample_column[position] = 2
        for image in drawn:
            if (position := self.position_of.get(image)) is not None:
                self.sample_column[position] = 1

    def _order(self) -> None:
        """Sort the queue: verifier failures first, then the rest, each in manifest order."""
        failed_first = self.verdicts != VERDICT_CODES.index("fail")
        self.order = np.lexsort((np.arange(len(self.images)), failed_first))
        self.rank = np.empty_like(self.order)
        self.rank[self.order] = np.arange(len(self.order))

    def _refresh_review(self, position: int, image: str) -> None:
        review = self.state.review_of(image)
        self.statuses[position] = STATUSES.index(review.status)
        for mask in self.reviewer_masks.values():
            mask[position] = False
        for reviewer in review.votes:
            mask = self.reviewer_masks.get(reviewer)
            if mask is None:
                mask = self.reviewer_masks[reviewer] = np.zeros(len(self.images), dtype=bool)
            mask[position] = True

    def _changed(self) -> None:
        self.version += 1
        self._cache.clear()

    # -- decisions --------------------------------------------------------------

    def record(self, decision: Decision) -> bool:
        """Log a decision durably and fold it (and anything others logged) in; False: a repeat."""
        new_one, decisions = self.log.append(decision)
        self.fold(decisions)
        return new_one

    def record_many(self, decisions: Sequence[Decision]) -> int:
        """Log many decisions with one fsync and fold them in; return how many were new."""
        written, folded = self.log.append_many(decisions)
        self.fold(folded)
        return written

    def refresh(self) -> None:
        """Fold in decisions other processes appended, and re-read a manifest replaced under us."""
        if self._manifest_replaced():
            self.build()
            return
        self.fold(self.log.sync())

    def fold(self, decisions: Sequence[Decision]) -> None:
        """Apply decisions (already in the log) to the columns."""
        if not decisions:
            return
        with self._lock:
            self.state.add(decisions)
            reorder = False
            for decision in decisions:
                position = self.position_of.get(decision.image)
                if position is None:
                    continue  # an image no longer current (regenerated since), or not in the set
                if decision.action == "regenerate":
                    self._replace(position, decision)
                    reorder = True
                    continue
                self._refresh_review(position, decision.image)
            if reorder:
                self._order()
            self.dirty = True
            self._changed()

    def _replace(self, position: int, decision: Decision) -> None:
        replacement = dict(decision.replacement or {})
        new_image = str(replacement["image"])
        del self.position_of[self.images[position]]
        self.images[position] = new_image
        self.position_of[new_image] = position
        self.verdicts[position] = VERDICT_CODES.index(verdict_of(replacement))
        self.reasons[:, position] = False
        codes = [self.reason_vocab.code(c) for c in reason_codes(replacement)]
        if len(self.reason_vocab.values) > self.reasons.shape[0]:
            grown = np.zeros((len(self.reason_vocab.values), len(self.images)), dtype=bool)
            grown[: self.reasons.shape[0]] = self.reasons
            self.reasons = grown
        self.reasons[codes, position] = True
        self.sample_column[position] = 0  # a new image is no part of the sample drawn before it
        self._refresh_review(position, new_image)

    # -- queries ----------------------------------------------------------------

    def matching(self, query: Query) -> np.ndarray:
        """Return the positions matching a query's filters, in queue order (cached per version)."""
        key = (self.version, *query.filters())
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                return found
            mask = np.ones(len(self.images), dtype=bool)
            if query.status != "all":
                mask &= self.statuses == STATUSES.index(query.status)
            if query.verdict:
                mask &= self._equal(self.verdicts, VERDICT_CODES, query.verdict)
            if query.reason:
                code = self.reason_vocab.codes.get(query.reason)
                mask &= self.reasons[code] if code is not None else False
            for name in FACETS:
                value = getattr(query, name)
                if value:
                    mask &= self._equal(self.facet_columns[name], self.facets[name].values, value)
            if query.sample:
                mask &= self._equal(self.sample_column, SAMPLE_FILTERS, query.sample)
            if query.reviewer:
                reviewer = self.reviewer_masks.get(query.reviewer)
                mask &= reviewer if reviewer is not None else False
            found = self.order[mask[self.order]]
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[key] = found
            return found

    @staticmethod
    def _equal(column: np.ndarray, values: Sequence[str], wanted: str) -> np.ndarray | bool:
        try:
            return column == values.index(wanted)
        except ValueError:
            return False

    def page(self, query: Query, size: int = PAGE_SIZE) -> Page:
        """Return one page of the queue."""
        found = self.matching(query)
        pages = max(1, -(-len(found) // size))
        number = min(query.page, pages)
        chosen = found[(number - 1) * size : number * size]
        return Page(tuple(int(p) for p in chosen), len(found), number, pages)

    def neighbours(self, query: Query, position: int) -> tuple[int | None, int | None]:
        """Return the entries before and after `position` in the filtered queue."""
        found = self.matching(query)
        ranks = self.rank[found]
        at = int(np.searchsorted(ranks, self.rank[position]))
        after = at + 1 if at < len(found) and found[at] == position else at
        before = int(found[at - 1]) if at > 0 else None
        following = int(found[after]) if after < len(found) else None
        return before, following

    def first(self, query: Query) -> int | None:
        """Return the first entry of the filtered queue (None when it is empty)."""
        found = self.matching(query)
        return int(found[0]) if len(found) else None

    def counts(self, name: str, query: Query) -> dict[str, int]:
        """Return how many images of the query (ignoring its own `name` filter) have each value."""
        mask_query = replace(query, **{name: ANY if name != "status" else "all"})
        found = self.matching(mask_query)
        if name == "status":
            column, values = self.statuses, STATUSES
        elif name == "verdict":
            column, values = self.verdicts, VERDICT_CODES
        elif name == "reason":
            totals = self.reasons[:, found].sum(axis=1)
            return {v: int(n) for v, n in zip(self.reason_vocab.values, totals, strict=True) if n}
        elif name == "reviewer":
            return {r: int(m[found].sum()) for r, m in sorted(self.reviewer_masks.items())}
        elif name == "sample":
            column, values = self.sample_column, SAMPLE_FILTERS
        else:
            column, values = self.facet_columns[name], self.facets[name].values
        tally = np.bincount(column[found], minlength=len(values))
        return {v: int(n) for v, n in zip(values, tally, strict=False) if n}

    def values(self, name: str) -> list[str]:
        """Return every value a filter can take, sorted."""
        if name == "status":
            return list(STATUS_FILTERS)
        if name == "verdict":
            return list(VERDICT_CODES)
        if name == "reason":
            return sorted(self.reason_vocab.values)
        if name == "reviewer":
            return sorted(self.reviewer_masks)
        if name == "sample":
            return list(SAMPLE_FILTERS) if self.sample is not None else []
        return sorted(self.facets[name].values)

    def entry(self, position: int) -> Entry:
        """Return the index's view of one entry."""
        with self._lock:
            image = self.images[position]
            return Entry(
                position=position,
                item_id=self.item_ids[position],
                image=image,
                job_key=self.job_keys[position],
                verdict=VERDICT_CODES[self.verdicts[position]],
                status=STATUSES[self.statuses[position]],
                codes=tuple(
                    self.reason_vocab.values[c] for c in np.flatnonzero(self.reasons[:, position])
                ),
                facets={
                    name: self.facets[name].values[self.facet_columns[name][position]]
                    for name in FACETS
                },
                reviewers=tuple(self.state.review_of(image).votes),
                sample=SAMPLE_FILTERS[self.sample_column[position]] if self.sample else "",
            )

    def set_state(self) -> SetState:
        """Return what certification needs of the set: current verdicts, every review."""
        with self._lock:
            verdicts = {
                image: VERDICT_CODES[code]
                for image, code in zip(self.images, self.verdicts, strict=True)
            }
            return SetState.of(verdicts, self.state)

    def certification(self) -> Assessment | None:
        """Return where the certified review stands (None: no audit sample drawn)."""
        sample = self.sample
        return None if sample is None else assess(sample, self.set_state())

    def row(self, position: int) -> dict[str, Any]:
        """Return the manifest row of an entry (read back from its line), review applied."""
        with self._lock:
            row = replaced_row(read_row_at(self.out, int(self.offsets[position])), self.state)
            row["review"] = self.state.review_of(self.images[position]).as_record()
            return row

    def __len__(self) -> int:
        return len(self.images)

    # -- the manifest -----------------------------------------------------------

    def _manifest_replaced(self) -> bool:
        try:
            now = os.stat(self.manifest)
        except FileNotFoundError:
            return False
        return _identity(now) != _identity(self._identity)

    def write_manifest(self, *, force: bool = False) -> bool:
        """Write the review (statuses, regenerations) into the manifest, atomically.

        Returns False when there was nothing new to write (`force`: write the
        review unless the manifest already holds exactly this log). The rows
        are written from a snapshot of the review, outside the lock, so pages
        keep answering; decisions that arrive meanwhile go in the next write.
        A manifest another command replaces meanwhile is re-read next time.
        """
        with self._lock:
            if self._manifest_replaced():
                self.build()
            wanted = self.dirty or (force and bool(self.state) and not self._applied())
            if not wanted:
                return False
            state = self.state.snapshot()
            mark = {"decisions": len(state.decisions), "log_bytes": self.log.position}
            self.dirty = False  # a decision folded from now on sets it again
        offsets: list[int] = []
        with ManifestDraft(self.out) as draft:
            for _, stored in scan_manifest(self.out):
                row = _reviewed(stored, state)
                offset = draft.add(row)
                if row.get("status") == "ok" and row.get("image"):
                    offsets.append(offset)
            with self._lock:
                if self._manifest_replaced() or len(offsets) != len(self.images):
                    draft.discard()  # someone else rewrote it meanwhile: redo later
                    self.dirty = True
                    return False
                draft.commit()
                self.offsets = np.asarray(offsets, dtype=np.int64)
                self._identity = os.stat(self.manifest)
                record = {**mark, "manifest": _identity(self._identity)}
                atomic_write_json(self.out / APPLIED, record)
                return True

    def _applied(self) -> bool:
        """Return whether the manifest already holds the review as the log stands now."""
        record = read_json(self.out / APPLIED)
        return isinstance(record, dict) and record == {
            "decisions": len(self.state.decisions),
            "log_bytes": self.log.position,
            "manifest": _identity(self._identity),
        }


def _reviewed(row: Mapping[str, Any], state: ReviewState) -> dict[str, Any]:
    """Return a manifest row with the review applied, its image hash the shown image's."""
    chain = state.chain(str(row["image"])) if row.get("image") else []
    result = next(apply_review([row], state))
    if chain:
        digest = (chain[-1].replacement or {}).get("image_sha256")
        if digest:
            result["image_sha256"] = digest
        else:
            result.pop("image_sha256", None)  # a regeneration that did not record its bytes
    return result


def _identity(stat: os.stat_result) -> list[int]:
    return [stat.st_ino, stat.st_size, stat.st_mtime_ns]


def _facet_values(row: Mapping[str, Any]) -> dict[str, str]:
    presentation = presentation_of(row)
    condition = row.get("condition") if isinstance(row.get("condition"), Mapping) else {}
    severity = presentation.get("severity")
    return {
        "scene": str(presentation.get("scene") or ""),
        "subject": str(row.get("subject") or ""),
        "backend": str(row.get("backend") or ""),
        "format": str(row.get("format") or condition.get("format") or "vision"),
        "n_options": str(row.get("n_options") or condition.get("n_options") or ""),
        "font": str(presentation.get("font_style") or ""),
        "capture": str(presentation.get("capture") or ""),
        "severity": "" if severity is None else str(severity),
    }
