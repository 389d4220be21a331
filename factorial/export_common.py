"""The rows of a sweep's output set as the exporters need them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.factorial.sweep_rows import prompt_for
from itemshot.renderer.manifest import MANIFEST
from itemshot.renderer.output import read_jsonl

_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class ExportRow:
    """One usable condition of one item: texts, answer, image and figure paths."""

    key: str
    item_id: str
    format: str
    n_options: str
    condition: Mapping[str, Any]
    question: str
    options: tuple[str, ...]
    answer: str
    subject: str
    language: str
    prompt: str
    image: Path | None = None
    figures: tuple[Path, ...] = field(default_factory=tuple)

    @property
    def cell(self) -> str:
        """Return a short label of the condition, e.g. `vision-10` or `vision-10-scene-webpage`."""
        parts = [self.format, self.n_options]
        for name, level in sorted(self.condition.items()):
            if name not in ("format", "n_options"):
                parts += [name, str(level)]
        return _SLUG.sub("-", "-".join(parts).lower()).strip("-")


def export_rows(out: Path) -> tuple[list[ExportRow], int]:
    """Return the ok rows of OUT/manifest.jsonl (in manifest order) and how many were not ok."""
    path = out / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"no {MANIFEST} in {out}")
    rows: list[ExportRow] = []
    not_ok = 0
    for record in read_jsonl(path):
        if record.get("status") != "ok":
            not_ok += 1
            continue
        fmt = str(record.get("format") or ("vision" if record.get("image") else "standard"))
        options = tuple(str(o) for o in record.get("options") or ())
        condition = dict(record.get("condition") or {})
        level = record.get("n_options", condition.get("n_options", len(options)))
        language = str(record.get("language") or "en")
        rows.append(
            ExportRow(
                key=str(record.get("job_key") or record["item_id"]),
                item_id=str(record["item_id"]),
                format=fmt,
                n_options=str(level),
                condition=condition,
                question=str(record.get("question") or ""),
                options=options,
                answer=str(record["answer"]),
                subject=str(record.get("subject") or ""),
                language=language,
                prompt=str(
                    record.get("prompt")
                    or prompt_for(fmt, str(record.get("question") or ""), options, language)
                ),
                image=out / record["image"] if record.get("image") else None,
                figures=tuple(out / p for p in record.get("figures") or ()),
            )
        )
    return rows, not_ok
