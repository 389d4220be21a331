"""Read an output set's manifest into the rows predict and analyze use, tolerating absent fields.

The renderer writes `job_key`, `item_id`, `status`, `image`, `answer`,
`options`, `question`, `subject`, `language`, `presentation`, `seed`; the
factorial controller adds `format`, `condition` and, for text formats,
`figures`. Rows without `format` are taken as `vision` when they carry an
image and as `standard` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.factorial.answers.parsers import LETTERS, coerce_options
from itemshot.factorial.design.cells import cell_id
from itemshot.outputs import load_manifest

FORMATS = (
    "blind",
    "standard",
    "vision",
    "vision_placeholder",
    "vision_text_only",
    "vision_question_only",
)
IMAGE_FORMATS = ("vision", "vision_placeholder", "vision_text_only", "vision_question_only")


class ManifestError(ValueError):
    """A manifest row that cannot be used; names the line, item and field."""


@dataclass(frozen=True)
class SweepRow:
    """One rendered condition of one item, as predict and analyze need it."""

    job_key: str
    item_id: str
    format: str
    answer: str
    options: tuple[str, ...]
    question: str = ""
    subject: str = ""
    language: str = "en"
    image: Path | None = None
    figures: tuple[Path, ...] = ()
    condition: Mapping[str, Any] = field(default_factory=dict)
    presentation: Mapping[str, Any] = field(default_factory=dict)
    verify_scores: Mapping[str, Any] = field(default_factory=dict)  # the verifier's field scores

    @property
    def n_options(self) -> int:
        """Return the number of options shown."""
        return len(self.options)

    @property
    def option_level(self) -> int:
        """Return the design's option count (condition `n_options`), else the count shown."""
        level = self.condition.get("n_options")
        if isinstance(level, int) and not isinstance(level, bool):
            return level
        if isinstance(level, str) and level.isdigit():
            return int(level)
        return self.n_options

    @property
    def cell(self) -> str:
        """Return the name of the row's cell (`cells.cell_id`), e.g. `vision·10·font_style=mono`."""
        return cell_id(
            self.format, self.condition.get("n_options", self.option_level), self.condition
        )

    def factor(self, name: str) -> Any:
        """Return a factor level from the condition, else from the presentation, else None."""
        if name in self.condition:
            return self.condition[name]
        if name == "format":
            return self.format
        if name == "n_options":
            return self.n_options
        return self.presentation.get(name)


def _answer_letter(value: Any, n_options: int) -> str:
    if isinstance(value, bool):
        raise ValueError("answer must be a letter or an index")
    if isinstance(value, int):
        index = value
    elif isinstance(value, str) and value.strip().isdigit():
        index = int(value.strip())
    elif isinstance(value, str) and len(value.strip()) == 1:
        index = LETTERS.index(value.strip().upper())
    else:
        raise ValueError(f"answer {value!r} is neither a letter nor an index")
    if not 0 <= index < n_options:
        raise ValueError(f"answer {value!r} is outside the {n_options} options")
    return LETTERS[index]


def row_from_record(record: Mapping[str, Any], root: Path) -> SweepRow:
    """Return a SweepRow from one manifest record; raises ValueError naming the bad field."""
    item_id = str(record.get("item_id") or record.get("id") or "")
    if not item_id:
        raise ValueError("field 'item_id' is missing")
    job_key = str(record.get("job_key") or item_id)
    try:
        options = tuple(coerce_options(record.get("options")))
    except (ValueError, SyntaxError) as error:
        raise ValueError(f"field 'options': {error}") from error
    if not options:
        raise ValueError("field 'options' is empty")
    try:
        answer = _answer_letter(record.get("answer"), len(options))
    except ValueError as error:
        raise ValueError(f"field 'answer': {error}") from error
    image = root / str(record["image"]) if record.get("image") else None
    figures = tuple(root / str(path) for path in record.get("figures") or ())
    fmt = str(record.get("format") or ("vision" if image is not None else "standard"))
    if fmt not in FORMATS:
        raise ValueError(f"field 'format': unknown format {fmt!r}")
    if fmt in IMAGE_FORMATS and image is None:
        raise ValueError(f"field 'image': format {fmt!r} needs an image")
    condition = record.get("condition")
    presentation = record.get("presentation")
    audit = record.get("verify")
    scores = audit.get("scores") if isinstance(audit, Mapping) else None
    return SweepRow(
        job_key=job_key,
        item_id=item_id,
        format=fmt,
        answer=answer,
        options=options,
        question=str(record.get("question") or ""),
        subject=str(record.get("subject") or ""),
        language=str(record.get("language") or "en"),
        image=image,
        figures=figures,
        condition=dict(condition) if isinstance(condition, Mapping) else {},
        presentation=dict(presentation) if isinstance(presentation, Mapping) else {},
        verify_scores=dict(scores) if isinstance(scores, Mapping) else {},
    )


@dataclass(frozen=True)
class Manifest:
    """The usable rows of an output set and the rows skipped, with reasons."""

    root: Path
    rows: tuple[SweepRow, ...]
    skipped: tuple[str, ...]


def read_manifest(out: Path) -> Manifest:
    """Return the rows of `out/manifest.jsonl` with status ok; others are listed as skipped.

    The output set's reader (`itemshot.outputs.load_manifest`) reads the file;
    this turns its rows into SweepRows. Skipped lines are listed in file order.
    """
    manifest = load_manifest(out)
    rows: list[SweepRow] = []
    skipped = [(problem.line, str(problem)) for problem in manifest.problems]
    for number, record in zip(manifest.lines, manifest.rows, strict=True):
        if record.status != "ok":
            reason = f"line {number}, item {record.item_id!r}: status {record.status!r}"
            skipped.append((number, reason))
            continue
        try:
            rows.append(row_from_record(record, out))
        except ValueError as error:
            skipped.append((number, f"line {number}, item {record.item_id!r}: {error}"))
    return Manifest(out, tuple(rows), tuple(reason for _, reason in sorted(skipped)))
