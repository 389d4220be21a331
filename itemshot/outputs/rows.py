"""The manifest row: one typed, versioned record per line of `manifest.jsonl`.

A row is a frozen dataclass with a typed attribute for every field a writer of
this package produces, and `extra` for fields it does not know (a sweep's
factor columns, a user's own notes), which `from_json`/`to_json` carry through
unchanged, so no writer drops a field it does not own. It also reads as a
`Mapping` of its JSON form (`row["image"]`, `row.get("verdict")`), so code
written against the plain rows keeps working.

A typed attribute that is None is either absent from the JSON row or written
as `null`; `nulls` remembers which, so a row reads and writes back byte for
byte.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from itemshot.renderer.items import ItemError
from itemshot.renderer.jobs import Job, PlanFailure

# 1: rows carry `schema`, `image_sha256`, and the hash of the bytes a verdict judged.
SCHEMA_VERSION = 1

# Fields a verification owns: the verdict and its record (reasons, scores, the
# hash of the image bytes it judged in `verify.image_sha256`).
VERDICT_FIELDS = ("verdict", "verify")
# Fields the review owns, each about the image the row shows.
REVIEW_FIELDS = ("review", "previous_images", "regeneration")


class ManifestRowError(ValueError):
    """A JSON value that is not a manifest row; names the field at fault."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field = field_name
        super().__init__(f"field {field_name!r}: {message}")


@dataclass(frozen=True, eq=False)
class ManifestRow(Mapping[str, Any]):
    """One row of an output set's manifest: a job, a text cell, or a failure.

    Compared and read like the dict `to_json` returns. Build rows with the
    constructors (`for_job`, `for_plan_failure`, `for_load_error`,
    `generated`) and change them with `with_fields`, `with_verdict`,
    `with_image_sha256`, which return new rows.
    """

    item_id: str
    status: str  # "ok", "failed" or "pending"
    condition: Mapping[str, Any] | None = None
    job_key: str | None = None
    stage: str | None = None  # where a failed row failed: load, render, fallback
    error: Mapping[str, Any] | None = None
    # The item as the row shows it.
    question: str | None = None
    options: Sequence[str] | None = None
    answer: str | None = None
    n_options: int | None = None
    subject: str | None = None
    language: str | None = None
    # How the image was made.
    seed: int | None = None
    content: Mapping[str, Any] | None = None
    presentation: Mapping[str, Any] | None = None
    backend: str | None = None
    # The image and its records.
    image: str | None = None
    image_sha256: str | None = None  # sha256 of the bytes of `image`
    clean_image: str | None = None
    layout: str | None = None
    width: int | None = None
    height: int | None = None
    font_scale: float | None = None
    fonts_requested: Sequence[str] | None = None
    placeholders: Sequence[Any] | None = None
    figure_files: Mapping[str, str] | None = None
    # Generative backends.
    requested_backend: str | None = None
    attempts: int | None = None
    fallback: bool | None = None
    fallback_job_key: str | None = None
    model: str | None = None
    template_version: str | None = None
    base_image: str | None = None
    # Sweep rows.
    format: str | None = None
    prompt: str | None = None
    figures: Sequence[str] | None = None
    figure_numbers: Sequence[int] | None = None
    missing_figures: Sequence[int] | None = None
    option_policy: str | None = None
    n_shown: int | None = None
    answer_check: Mapping[str, Any] | None = None
    group: int | None = None
    # The verification.
    verdict: str | None = None  # "pass" or "fail"
    verify: Mapping[str, Any] | None = None
    # The review.
    review: Mapping[str, Any] | None = None
    previous_images: Sequence[str] | None = None
    regeneration: Mapping[str, Any] | None = None
    schema: int | None = SCHEMA_VERSION  # None: a row written before rows had a version
    # Fields no attribute above holds, kept as they are.
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Typed fields present in the JSON row as null.
    nulls: frozenset[str] = frozenset()

    # -- JSON -------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ManifestRow:
        """Return the row of a decoded JSON object; ManifestRowError when it is not a row."""
        if not isinstance(data, Mapping):
            raise ManifestRowError("(row)", f"not a JSON object but {type(data).__name__}")
        for name in ("item_id", "status"):
            if not isinstance(data.get(name), str):
                raise ManifestRowError(name, "missing or not text")
        typed: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        nulls: set[str] = set()
        for key, value in data.items():
            if key in TYPED_FIELDS:
                typed[key] = value
                if value is None:
                    nulls.add(key)
            else:
                extra[key] = value
        typed.setdefault("schema", None)
        return cls(**typed, extra=extra, nulls=frozenset(nulls))

    def to_json(self) -> dict[str, Any]:
        """Return the row as a new JSON-ready dict (nested values are shared, not copied)."""
        record: dict[str, Any] = {}
        for name in TYPED_FIELDS:
            value = getattr(self, name)
            if value is not None or name in self.nulls:
                record[name] = value
        record.update(self.extra)
        return record

    # -- Mapping ----------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        if key in TYPED_FIELDS:
            value = getattr(self, key)
            if value is None and key not in self.nulls:
                raise KeyError(key)
            return value
        return self.extra[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())

    def __repr__(self) -> str:
        where = self.image or self.job_key or ""
        return f"ManifestRow({self.item_id!r}, {self.status!r}, {where!r})"

    # -- changes ----------------------------------------------------------------

    def with_fields(self, **changes: Any) -> ManifestRow:
        """Return the row with fields set (None writes a JSON null); unknown names go to `extra`."""
        return ManifestRow.from_json({**self.to_json(), **changes})

    def without(self, *names: str) -> ManifestRow:
        """Return the row without the named fields."""
        return ManifestRow.from_json({k: v for k, v in self.to_json().items() if k not in names})

    @property
    def verdict_sha256(self) -> str | None:
        """Return the hash of the image bytes the row's verdict judged (None: unknown)."""
        record = self.verify
        value = record.get("image_sha256") if isinstance(record, Mapping) else None
        return value if isinstance(value, str) else None

    def with_verdict(
        self, passed: bool, record: Mapping[str, Any], image_sha256: str | None
    ) -> ManifestRow:
        """Return the row with a verdict on the image bytes whose sha256 is `image_sha256`.

        None: the bytes could not be read; such a verdict is never carried to a re-run.
        """
        if image_sha256 is None:
            row = self.without("image_sha256")
            return row.with_fields(verdict="pass" if passed else "fail", verify=dict(record))
        return self.with_fields(
            verdict="pass" if passed else "fail",
            verify={**record, "image_sha256": image_sha256},
            image_sha256=image_sha256,
        )

    def without_verdict(self) -> ManifestRow:
        """Return the row without its verdict."""
        return self.without(*VERDICT_FIELDS)

    def with_image_sha256(self, image_sha256: str) -> ManifestRow:
        """Return the row with the current hash of its image; a verdict on other bytes is dropped."""
        row = self.with_fields(image_sha256=image_sha256)
        if any(name in self for name in VERDICT_FIELDS) and self.verdict_sha256 != image_sha256:
            row = row.without_verdict()
        return row

    # -- constructors -----------------------------------------------------------

    @classmethod
    def for_job(cls, job: Job, backend: str = "chromium") -> ManifestRow:
        """Return the fields every row of a job has, rendered or not (status `pending`)."""
        item = job.item
        return cls.from_json(
            {
                "schema": SCHEMA_VERSION,
                "item_id": item.id,
                "job_key": job.key,
                "seed": job.seed,
                "condition": dict(job.condition),
                "content": job.content.as_dict(),
                "question": item.question,
                "options": list(item.options),
                "answer": item.answer_letter,
                "n_options": len(item.options),
                "subject": item.subject,
                "language": item.language,
                "presentation": job.presentation.as_dict(),
                "backend": backend,
                "image": None,
                "layout": None,
                "status": "pending",
                "error": None,
            }
        )

    @classmethod
    def for_plan_failure(cls, failure: PlanFailure) -> ManifestRow:
        """Return the row of a request that never became a job (bad item or presentation)."""
        return cls.from_json(
            {
                "schema": SCHEMA_VERSION,
                "item_id": failure.item_id,
                "condition": dict(failure.condition),
                "status": "failed",
                "stage": "load",
                "image": None,
                "error": {**failure.error.as_record(), "reason": "invalid_item"},
            }
        )

    @classmethod
    def for_load_error(cls, error: ItemError) -> ManifestRow:
        """Return the row of a dataset row that did not load as an item (no condition)."""
        return cls.for_plan_failure(PlanFailure(error.item_id, {}, error))

    @classmethod
    def generated(
        cls,
        job: Job,
        *,
        backend: str,
        image: str,
        image_sha256: str,
        size: tuple[int, int],
        attempts: int,
        model: str,
        template_version: str,
        passed: bool,
        audit: Mapping[str, Any] | None,
    ) -> ManifestRow:
        """Return the row of an image a generative model made, with its whole-image verdict.

        `audit` is the generative loop's verdict record of the image (None:
        the attempt carries none).
        """
        row = cls.for_job(job).with_fields(
            backend=backend,
            requested_backend=backend,
            status="ok",
            image=image,
            layout=None,
            width=size[0],
            height=size[1],
            attempts=attempts,
            fallback=False,
            model=model,
            template_version=template_version,
        )
        return row.with_verdict(passed, {"mode": "whole_image", "verdict": audit}, image_sha256)


TYPED_FIELDS: tuple[str, ...] = tuple(
    f.name for f in fields(ManifestRow) if f.name not in ("extra", "nulls")
)
# Fields every row-producing run (render, generative, sweep) owns: all it knows but
# the verdict and the review, which belong to the verification and the review.
RENDER_FIELDS = frozenset(TYPED_FIELDS) - set(VERDICT_FIELDS) - set(REVIEW_FIELDS)


def as_row(value: ManifestRow | Mapping[str, Any]) -> ManifestRow:
    """Return `value` as a ManifestRow (a plain dict is read with `from_json`)."""
    return value if isinstance(value, ManifestRow) else ManifestRow.from_json(value)
