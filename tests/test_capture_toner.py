"""A scan's toner dropouts are voids in strokes, not snow on a page's dark fill."""

from __future__ import annotations

import cv2
import numpy as np

from itemshot.degradations.frame import Frame
from itemshot.degradations.scan import TonerNoise

PARAMS = {"speckle": 0.002, "dropout": 0.04, "spread": 0, "noise_seed": 5}


def _page(ink: int, paper: int) -> np.ndarray:
    """A 1024 × 768 page of `paper` with six lines of `ink` text on its upper half."""
    page = np.full((1024, 768, 3), paper, np.uint8)
    for line in range(6):
        cv2.putText(page, "the quick brown fox jumps over 1,234", (40, 80 + 60 * line),
                    cv2.FONT_HERSHEY_SIMPLEX, 1.0, (ink, ink, ink), 2)  # fmt: skip
    return page


def _tonered(page: np.ndarray) -> np.ndarray:
    points = np.zeros((4, 2))
    return TonerNoise.apply(Frame(page, points, 1024), PARAMS).image


def test_a_dark_fill_keeps_its_toner() -> None:
    board = _page(ink=230, paper=40)
    grey = cv2.cvtColor(_tonered(board), cv2.COLOR_RGB2GRAY)
    # The fill below the text: before, 4% of its 2 × 2 blocks went as light as chalk.
    assert np.count_nonzero(grey[600:1000, 40:728] > 120) == 0


def test_dark_strokes_still_lose_toner() -> None:
    sheet = _page(ink=20, paper=245)
    dark = cv2.cvtColor(sheet, cv2.COLOR_RGB2GRAY) < 128
    grey = cv2.cvtColor(_tonered(sheet), cv2.COLOR_RGB2GRAY)
    voids = np.count_nonzero(dark & (grey > 110)) / np.count_nonzero(dark)
    assert 0.01 < voids < 0.1
