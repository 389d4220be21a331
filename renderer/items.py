"""The item model: one multiple-choice question with its figures."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.renderer.messages import readable

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_OPTIONS = len(LETTERS)

# `<image 3>` and `<image3>` both occur in MMMU-style data.
IMAGE_TAG = re.compile(r"<image\s*(\d+)>")


class ItemError(ValueError):
    """A problem with one item's data; names the item and the field at fault."""

    def __init__(self, item_id: str, field: str, message: str) -> None:
        self.item_id = item_id
        self.field = field
        # Recorded in manifests and summaries: bounded, one line, no object reprs.
        self.message = readable(message)
        super().__init__(f"item {item_id!r}, field {field!r}: {self.message}")

    def as_record(self) -> dict[str, str]:
        """Return the error as a JSON-ready record for manifests and summaries."""
        return {"item_id": self.item_id, "field": self.field, "message": self.message}


@dataclass(frozen=True)
class Figure:
    """One source figure: the bytes the page shows, where it came from and its pixel size.

    `normalised` lists what was done to the source file's pixels so that the page
    and the verifier see one still, upright, 8-bit image (e.g. "first of 3
    frames"); empty when the file's own bytes are shown.
    """

    number: int
    data: bytes
    mime: str
    width: int
    height: int
    source: str
    normalised: tuple[str, ...] = ()

    def __repr__(self) -> str:
        """Return one line: number, type, size and source, never the bytes."""
        return (
            f"Figure({self.number}, {self.mime} {self.width}×{self.height}, "
            f"{len(self.data):,} bytes from {self.source!r})"
        )

    @property
    def sha256(self) -> str:
        """Return the hex digest of the figure bytes."""
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Item:
    """A multiple-choice question: stem, options, answer index and figures.

    `options_4` keeps a dataset's original 4-option set (with `answer_4`) when it
    ships one beside a larger set, as the MMMU-Pro mix layout does.
    `missing_figures` lists `<image N>` numbers whose files the dataset lacks;
    such an item renders only under the placeholder policy.
    """

    id: str
    question: str
    options: tuple[str, ...]
    answer: int
    figures: Mapping[int, Figure] = field(default_factory=dict)
    options_4: tuple[str, ...] | None = None
    answer_4: int | None = None
    subject: str = ""
    language: str = "en"
    missing_figures: tuple[int, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """Return one line: id, the stem's start, options, answer and figures."""
        stem = " ".join(self.question.split())
        stem = stem if len(stem) <= 60 else stem[:59] + "…"
        figures = f", {len(self.figures)} figures" if self.figures else ""
        return (
            f"Item({self.id!r}, {stem!r}, {len(self.options)} options, "
            f"answer {LETTERS[self.answer] if 0 <= self.answer < len(LETTERS) else self.answer}"
            f"{figures})"
        )

    @property
    def answer_letter(self) -> str:
        """Return the letter of the correct option."""
        return LETTERS[self.answer]

    def referenced_figures(self) -> list[int]:
        """Return the figure numbers referenced by `<image N>` tags, in first-use order."""
        seen: list[int] = []
        for text in (self.question, *self.options):
            for match in IMAGE_TAG.finditer(text):
                number = int(match.group(1))
                if number not in seen:
                    seen.append(number)
        return seen

    def content_hash(self) -> str:
        """Return a stable hash of everything about the item that affects its renders."""
        digest = hashlib.sha256()
        for part in (self.id, self.question, "\x1f".join(self.options), str(self.answer)):
            digest.update(part.encode("utf-8"))
            digest.update(b"\x1e")
        digest.update(self.language.encode())
        for number in sorted(self.figures):
            digest.update(f"{number}:{self.figures[number].sha256}".encode())
        digest.update(repr(self.missing_figures).encode())
        return digest.hexdigest()


def safe_name(item_id: str) -> str:
    """Return a filesystem-safe, readable stem for an item id."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", item_id).strip("._")
    return cleaned[:60] or "item"


def relative_to_root(path: Path, root: Path) -> bool:
    """Return whether `path` (resolved) lies inside `root` (resolved)."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
