"""The rows of a sweep's output set as the exporters need them, and what an export wrote."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.factorial.design.cells import CORE_FACTORS, cell_id
from itemshot.factorial.design.sweep_rows import FIGURE_FORMATS, prompt_for
from itemshot.outputs import read_manifest
from itemshot.renderer.items import IMAGE_TAG

RowFilter = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class ExportRow:
    """One usable condition of one item: texts, answer, and the images the design sends.

    `n_options` is the design's option level when it is a number (4, 10), else
    the number of options shown; `option_level` keeps the level as written
    (`4`, `10`, `all`).
    """

    key: str
    item_id: str
    format: str
    n_options: int
    option_level: str
    condition: Mapping[str, Any]
    question: str
    options: tuple[str, ...]
    answer: str
    subject: str
    language: str
    prompt: str
    image: Path | None = None
    figures: tuple[Path, ...] = field(default_factory=tuple)
    figure_numbers: tuple[int, ...] = field(default_factory=tuple)
    missing_figures: tuple[int, ...] = field(default_factory=tuple)

    @property
    def cell(self) -> str:
        """Return the cell's name (`design.cells`), e.g. `vision·10·scene=webpage`."""
        return cell_id(self.format, self.option_level, self.factors)

    @property
    def factors(self) -> dict[str, Any]:
        """Return the condition's factors besides format and options (presentation levels)."""
        return {k: v for k, v in self.condition.items() if k not in CORE_FACTORS}

    @property
    def sent_figures(self) -> tuple[Path, ...]:
        """Return the figures the design sends as images of their own (standard, text-only)."""
        return self.figures if self.format in FIGURE_FORMATS else ()

    @property
    def images(self) -> tuple[Path, ...]:
        """Return the images the design sends with this row, in order: render, then figures."""
        rendered = (self.image,) if self.image is not None else ()
        return rendered + self.sent_figures


@dataclass(frozen=True)
class Selection:
    """The rows an export takes from an output set, and how many it left out and why."""

    rows: tuple[ExportRow, ...]
    not_ok: int
    filtered: int = 0


@dataclass(frozen=True)
class Written:
    """What one exporter wrote: its files, the rows they hold, the rows it could not hold."""

    paths: tuple[Path, ...]
    rows: int
    skipped: tuple[Mapping[str, str], ...] = ()


def image_name(path: Path) -> str:
    """Return a content-addressed file name for an image (`<sha256>.<ext>`).

    Harnesses cache decoded images by name; a name that changes with the bytes
    means no cache can serve an image of an earlier export.
    """
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return f"{digest}{path.suffix.lower() or '.png'}"


def _figure_numbers(record: Mapping[str, Any], question: str, options: tuple[str, ...]) -> list:
    if "figure_numbers" in record:
        return [int(n) for n in record["figure_numbers"] or ()]
    # Output sets written before the manifest carried the numbers: the figures
    # were written in first-use order of the `<image N>` tags, missing ones left out.
    missing = set(record.get("missing_figures") or ())
    numbers: list[int] = []
    for text in (question, *options):
        for match in IMAGE_TAG.finditer(text):
            number = int(match.group(1))
            if number not in numbers and number not in missing:
                numbers.append(number)
    return numbers[: len(record.get("figures") or ())]


def export_row(record: Mapping[str, Any], out: Path) -> ExportRow:
    """Return the ExportRow of one ok manifest record of the output set in `out`."""
    fmt = str(record.get("format") or ("vision" if record.get("image") else "standard"))
    options = tuple(str(o) for o in record.get("options") or ())
    condition = dict(record.get("condition") or {})
    level = str(condition.get("n_options", record.get("n_options", len(options))))
    question = str(record.get("question") or "")
    language = str(record.get("language") or "en")
    return ExportRow(
        key=str(record.get("job_key") or record["item_id"]),
        item_id=str(record["item_id"]),
        format=fmt,
        n_options=int(level) if level.isdigit() else len(options),
        option_level=level,
        condition=condition,
        question=question,
        options=options,
        answer=str(record["answer"]),
        subject=str(record.get("subject") or ""),
        language=language,
        prompt=str(record.get("prompt") or prompt_for(fmt, question, options, language)),
        image=out / record["image"] if record.get("image") else None,
        figures=tuple(out / p for p in record.get("figures") or ()),
        figure_numbers=tuple(_figure_numbers(record, question, options)),
        missing_figures=tuple(int(n) for n in record.get("missing_figures") or ()),
    )


def export_rows(out: Path, keep: RowFilter | None = None) -> Selection:
    """Return the ok rows of OUT/manifest.jsonl (in manifest order) that `keep` accepts.

    `keep` sees each ok manifest record and returns whether it is exported
    (e.g. to leave out images a reviewer rejected); rows it refuses are
    counted as `filtered`.
    """
    rows: list[ExportRow] = []
    not_ok = filtered = 0
    for record in read_manifest(out):
        if record.get("status") != "ok":
            not_ok += 1
        elif keep is not None and not keep(record):
            filtered += 1
        else:
            rows.append(export_row(record, out))
    return Selection(tuple(rows), not_ok, filtered)
