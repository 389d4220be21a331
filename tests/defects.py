"""Synthetic one-defect images made from real renders, to measure what the verifier catches.

Test tooling (the tests and the benchmarks use it; it is not shipped). Two
families of defect:

- pixel and source defects (`KINDS`): a clean render's pixels are edited
  (an option painted out, two options swapped, …) or, for `ITEM_DEFECTS`,
  the item's text is changed while the image is kept;
- rendered edits (`EDIT_KINDS`): one meaning-changing edit of the item's
  text (`word_changed`, `negation_dropped`, `formula_digit`, `unit_prefix`),
  made by `tests.item_edits.edit_item`. The changed item is rendered with the same seed,
  scene and font as the original, and that image is verified against the
  original item: the page says something other than its source.
"""

from __future__ import annotations

import io
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest
from itemshot.renderer.records import Layout, Region, box_to_quad, quad_bounds
from itemshot.verify.page.images import load_rgb
from tests.item_edits import EDIT_KINDS, Edit, edit_item  # noqa: F401 (EDIT_KINDS: re-exported)

KINDS = (
    "option_removed",
    "digit_changed",
    "unit_changed",
    "options_swapped",
    "figure_replaced",
    "figure_removed",
    "question_truncated",
    "illegible",
)


@dataclass(frozen=True)
class Case:
    """One image to verify, the item it is checked against, and whether it is defective."""

    name: str
    kind: str  # "clean" or one of KINDS
    image: np.ndarray
    item: Item
    layout: Layout
    render: dict
    clean: np.ndarray | None = None  # the clean render a capture was made from
    capture: Mapping | None = None  # the capture's stored parameters (replayable)

    def clean_layout(self) -> Layout:
        """Return the layout on the clean render (each region's quad back at its box)."""
        regions = tuple(r.with_quad(box_to_quad(r.box)) for r in self.layout.regions)
        return replace(self.layout, regions=regions)


# Item-side defects: the image is kept and the source text changed, so what the image
# shows no longer matches; the others edit the clean render's pixels.
ITEM_DEFECTS = ("digit_changed", "unit_changed")


def _box(region: Region) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = quad_bounds(region.quad)
    return int(x0), int(y0), int(np.ceil(x1)), int(np.ceil(y1))


def _ground(image: np.ndarray, box: tuple[int, int, int, int]) -> tuple[int, ...]:
    x0, y0, x1, y1 = box
    ring = np.concatenate(
        [image[max(0, y0 - 2) : y0, x0:x1].reshape(-1, 3), image[y1 : y1 + 2, x0:x1].reshape(-1, 3)]
    )
    if not ring.size:
        return (255, 255, 255)
    return tuple(int(c) for c in np.median(ring, axis=0))


def _paint(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    out = image.copy()
    x0, y0, x1, y1 = box
    out[y0:y1, x0:x1] = _ground(image, box)
    return out


def _text_options(layout: Layout, item: Item) -> list[Region]:
    return [
        r
        for r in layout.regions
        if r.kind == "option"
        and r.text.strip()
        and not re.search(r"<image", item.options[ord(r.letter) - 65])
    ]


LABEL_REACH = 4.0  # em from an option's first ink within which its label ends


def _label_split(image: np.ndarray, region: Region) -> int:
    """Return the x (image px) where an option's label ends and its text begins."""
    x0, y0, x1, y1 = _box(region)
    grey = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_RGB2GRAY)
    if np.median(grey) < 128:
        grey = 255 - grey
    # Middle rows only, edges skipped: an option box's frame is not text.
    h = grey.shape[0]
    middle = grey[h // 4 : max(h // 4 + 1, 3 * h // 4)]
    ink = (middle < np.median(middle) - 60).any(axis=0)
    edge = 8
    ink[:edge] = False
    ink[-edge:] = False
    columns = np.nonzero(ink)[0]
    if not columns.size:
        return x0
    # The label ends at the widest blank within its first few ems: a mono "(A)" has blanks
    # between its glyphs too, narrower than the space after it. A split inside the label
    # would move its letter with the text: options moved, not swapped.
    # Only a blank with ink after it: the blank after a one-letter text ("(A)  D") ends nowhere.
    reach = min(len(ink), columns[0] + int(LABEL_REACH * region.font_px))
    widest, end, run = 0, 0, 0
    for x in range(columns[0], reach):
        if ink[x] and run > widest:
            widest, end = run, x - 1
        run = 0 if ink[x] else run + 1
    if widest < max(3, int(region.font_px * 0.18)):
        return x0 + len(ink) // 3
    return x0 + end - widest // 2


def option_removed(
    image: np.ndarray, item: Item, layout: Layout, rng: random.Random
) -> tuple[np.ndarray, Item] | None:
    """Paint one text option (label and text) with its background."""
    options = _text_options(layout, item)
    if not options:
        return None
    return _paint(image, _box(rng.choice(options))), item


def digit_changed(
    image: np.ndarray, item: Item, layout: Layout, rng: random.Random
) -> tuple[np.ndarray, Item] | None:
    """Keep the image; change one digit of the item's stem (the image now shows another number)."""
    text = re.sub(r"<image\s*\d+>", lambda m: "\0" * len(m.group(0)), item.question)
    digits = [m.start() for m in re.finditer(r"\d", text)]
    if not digits:
        return None
    at = rng.choice(digits)
    new = str((int(item.question[at]) + rng.randint(1, 8)) % 10)
    return image, replace(item, question=item.question[:at] + new + item.question[at + 1 :])


# A unit and what it is changed into: same kind of quantity, another value.
_UNIT_SWAPS = {
    "cm": "mm", "mm": "cm", "m": "km", "km": "m", "kg": "g", "g": "kg", "mol": "mmol",
    "s": "ms", "ms": "s", "%": "°", "°": "%", "h": "min", "min": "h", "L": "mL", "mL": "L",
    "kW": "W", "W": "kW", "V": "mV", "J": "kJ", "N": "kN", "Hz": "kHz", "kPa": "MPa",
    "K": "°C", "kJ": "MJ", "A": "mA",
}  # fmt: skip
_NUMBER_UNIT = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)(\s?)(%|°|[A-Za-z]{1,3})(?![A-Za-z])")


def _swap_unit(text: str, rng: random.Random) -> str | None:
    masked = re.sub(r"<image\s*\d+>|\$[^$]*\$", lambda m: "\0" * len(m.group(0)), text)
    found = [m for m in _NUMBER_UNIT.finditer(masked) if m.group(3) in _UNIT_SWAPS]
    if not found:
        return None
    match = rng.choice(found)
    return text[: match.start(3)] + _UNIT_SWAPS[match.group(3)] + text[match.end(3) :]


def unit_changed(
    image: np.ndarray, item: Item, layout: Layout, rng: random.Random
) -> tuple[np.ndarray, Item] | None:
    """Keep the image; change the unit after one number in the stem or an option (cm → mm)."""
    fields = [("question", -1, item.question)] + [
        ("option", i, o) for i, o in enumerate(item.options)
    ]
    rng.shuffle(fields)
    for kind, index, text in fields:
        changed = _swap_unit(text, rng)
        if changed is None:
            continue
        if kind == "question":
            return image, replace(item, question=changed)
        options = list(item.options)
        options[index] = changed
        return image, replace(item, options=tuple(options))
    return None


def options_swapped(
    image: np.ndarray, item: Item, layout: Layout, rng: random.Random
) -> tuple[np.ndarray, Item] | None:
    """Swap the text (not the labels) of two options that read differently."""
    options = _text_options(layout, item)
    pairs = [
        (a, b)
        for i, a in enumerate(options)
        for b in options[i + 1 :]
        if a.text.strip() != b.text.strip()
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    out = image.copy()
    _ax0, ay0, ax1, ay1 = _box(a)
    _bx0, by0, bx1, by1 = _box(b)
    sa, sb = _label_split(image, a), _label_split(image, b)
    piece_a = image[ay0:ay1, sa:ax1].copy()
    piece_b = image[by0:by1, sb:bx1].copy()
    out[ay0:ay1, sa:ax1] = _ground(image, (sa, ay0, ax1, ay1))
    out[by0:by1, sb:bx1] = _ground(image, (sb, by0, bx1, by1))
    h = min(piece_b.shape[0], ay1 - ay0)
    w = min(piece_b.shape[1], ax1 - sa)
    out[ay0 : ay0 + h, sa : sa + w] = piece_b[:h, :w]
    h = min(piece_a.shape[0], by1 - by0)
    w = min(piece_a.shape[1], bx1 - sb)
    out[by0 : by0 + h, sb : sb + w] = piece_a[:h, :w]
    return out, item


def figure_replaced(
    image: np.ndarray, item: Item, layout: Layout, rng: random.Random, others: list[bytes]
) -> tuple[np.ndarray, Item] | None:
    """Paste another fixture figure into a figure box, resized to the box."""
    figures = [r for r in layout.regions if r.kind == "figure" and r.figure in item.figures]
    if not figures:
        return None
    region = rng.choice(figures)
    own = item.figures[region.figure].data
    replacements = [o for o in others if o != own]
    if not replacements:  # a suite with one figure has nothing to replace it with
        return None
    data = rng.choice(replacements)
    x0, y0, x1, y1 = _box(region)
    other = Image.open(io.BytesIO(data)).convert("RGB").resize((x1 - x0, y1 - y0))
    out = image.copy()
    out[y0:y1, x0:x1] = np.asarray(other)
    return out, item


def figure_removed(
    image: np.ndarray, item: Item, layout: Layout, rng: random.Random
) -> tuple[np.ndarray, Item] | None:
    """Paint a figure box with its background."""
    figures = [r for r in layout.regions if r.kind == "figure" and r.figure in item.figures]
    if not figures:
        return None
    return _paint(image, _box(rng.choice(figures))), item


def question_truncated(
    image: np.ndarray, item: Item, layout: Layout, rng: random.Random
) -> tuple[np.ndarray, Item] | None:
    """Cut the end of the question off: its last line, or the right 40% of a single line's text.

    A single line is cut by its ink, not its box: a short line in a wide
    block would otherwise lose nothing but blank paper.
    """
    questions = [r for r in layout.regions if r.kind == "question" and r.text.strip()]
    if not questions:
        return None
    region = questions[-1]
    x0, y0, x1, y1 = _box(region)
    line = region.font_px * 1.6
    if (y1 - y0) > 1.6 * line:
        box = (x0, int(y1 - line * 1.05), x1, y1)
    else:
        left, right = _ink_columns(image, (x0, y0, x1, y1))
        box = (left + int((right - left) * 0.6), y0, x1, y1)
    return _paint(image, box), item


INK_STEP = 40  # grey levels from the background that count as ink
RULE_SHARE = 0.6  # a row or column inked over more of its length than this is a rule


def _ink_columns(image: np.ndarray, box: tuple[int, int, int, int]) -> tuple[int, int]:
    """Return the first and last image columns of `box` that hold text ink.

    Rows and columns inked over most of their length are rules (a notebook's
    lines, a margin), not text, and are left out.
    """
    x0, y0, x1, y1 = box
    grey = cv2.cvtColor(np.ascontiguousarray(image[y0:y1, x0:x1, :3]), cv2.COLOR_RGB2GRAY)
    away = np.abs(grey.astype(np.int16) - int(np.median(grey))) > INK_STEP
    away[away.mean(axis=1) > RULE_SHARE, :] = False
    away[:, away.mean(axis=0) > RULE_SHARE] = False
    columns = np.flatnonzero(away.any(axis=0))
    if columns.size == 0:
        return x0, x1
    return x0 + int(columns[0]), x0 + int(columns[-1]) + 1


def illegible(
    image: np.ndarray, item: Item, layout: Layout, rng: random.Random
) -> tuple[np.ndarray, Item] | None:
    """Downscale to a fifth, blur, and scale back: text no one can read."""
    h, w = image.shape[:2]
    small = cv2.resize(image, (w // 5, h // 5), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (3, 3), 1.2)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), item


def load_case(out: Path, sidecar: Path, item: Item, kind: str = "clean") -> Case:
    """Return the Case of one image of an output set, read back from its sidecar.

    `item` is what the image is checked against: its own item for a clean
    render, the original item for a render of an edited one.
    """
    record = json.loads(sidecar.read_text(encoding="utf-8"))
    row = record["manifest"]
    clean = row.get("clean_image")
    return Case(
        name=row["image"],
        kind=kind,
        image=load_rgb(out / row["image"]),
        item=item,
        layout=Layout.from_dict(record["layout"]),
        render=record["render"],
        clean=load_rgb(out / clean) if clean else None,
        capture=record.get("capture"),
    )


def clean_cases(out: Path, items: Mapping[str, Item]) -> list[Case]:
    """Return a clean Case for every image of an output set, read back from its sidecars."""
    cases = []
    for sidecar in sorted((out / "images").glob("*.json")):
        item_id = json.loads(sidecar.read_text(encoding="utf-8"))["manifest"]["item_id"]
        cases.append(load_case(out, sidecar, items[item_id]))
    return cases


# Takes the clean page with a defect, the clean regions and a capture's stored params; returns
# the pixels of the same capture taken of it (a decoded RGB array, not an encoded record).
Recapture = Callable[[np.ndarray, Sequence[Region], Mapping[str, Any]], np.ndarray]


def defective_cases(
    clean: Sequence[Case],
    per_kind: int,
    rng: random.Random,
    recapture: Recapture | None = None,
    kinds: Sequence[str] = KINDS,
) -> list[Case]:
    """Return up to `per_kind` one-defect copies of (shuffled) clean cases for every kind.

    A captured case gets its pixel defect on its clean render, which
    `recapture(image, clean_regions, params)` (the capture's replay) then
    captures again exactly as before; without it captured cases only get
    item-side defects.

    A maker that cannot apply its defect to a case (no figure, no digit…)
    returns None and the next case is tried. `figure_replaced` draws the
    replacement from the other figures of the same set.
    """
    figures = list(dict.fromkeys(f.data for c in clean for f in c.item.figures.values()))
    made: list[Case] = []
    for kind in kinds:
        maker = globals()[kind]
        order = list(clean)
        rng.shuffle(order)
        count = 0
        for case in order:
            if count >= per_kind:
                break
            on_clean = case.capture is not None and kind not in ITEM_DEFECTS
            if on_clean and (recapture is None or case.clean is None):
                continue
            if on_clean:
                args = (case.clean, case.item, case.clean_layout(), rng)
            else:
                args = (case.image, case.item, case.layout, rng)
            result = maker(*args, figures) if kind == "figure_replaced" else maker(*args)
            if result is None:
                continue
            image, item = result
            if on_clean:  # the defect is on the page; the same capture is then taken of it
                assert recapture is not None and case.capture is not None
                image = recapture(image, case.clean_layout().regions, case.capture)
                if not isinstance(image, np.ndarray) or image.shape != case.image.shape:
                    raise TypeError(
                        f"recapture must return the captured pixels, shaped like {case.name}'s "
                        f"{case.image.shape}; it returned {type(image).__name__}"
                    )
            made.append(replace(case, kind=kind, image=image, item=item))
            count += 1
    return made


def edited_request(request: JobRequest, kind: str, seed: int = 0) -> tuple[JobRequest, Edit] | None:
    """Return the request rendering `request`'s item with one `kind` edit, and the edit.

    The edited item keeps its id, and the request its presentation and
    condition, so the job seed — and with it the scene, font, colours and
    any capture — is the original's: only the edited text differs.
    """
    edit = edit_item(request.item, kind, seed)
    if edit is None:
        return None
    return replace(request, item=edit.item), edit
