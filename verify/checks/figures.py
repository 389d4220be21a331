"""Figure presence: is this source figure shown here, whole and unchanged?

These checks know where the figure should be (a region of the layout record).
Clean renders: the figure's region is cropped and compared with the source
resized to the same box by normalised cross-correlation, allowing a small
shift (template matching). Warped or captured boxes: local features (SIFT) of
the source are matched into the box and a homography is fitted with RANSAC;
the score is the share of the source's features that are geometric inliers.
Images without a layout record are searched by `verify.checks.figure_search`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from itemshot.renderer.imaging import IMAGE_LIMITS, decode_still
from itemshot.verify.page.crops import gray
from itemshot.verify.page.images import flatten_alpha

SHIFT = 6  # px of slack around the region for template matching
TEMPLATE_BLUR = 1.0  # px (Gaussian sigma) both sides are softened by before correlation


@lru_cache(maxsize=64)
def decode_figure(data: bytes) -> np.ndarray:
    """Return a figure's bytes as a grey array, transparency flattened onto white.

    Read through the renderer's `decode_still`, the normalisation the page's
    figure went through (first frame, EXIF orientation, 16-bit scaled to 8),
    so the source is compared as the page shows it.
    """
    with decode_still(data, IMAGE_LIMITS, "figure").image as image:
        array = np.asarray(flatten_alpha(image).convert("L"))
    array.setflags(write=False)
    return array


def template_score(crop: np.ndarray, figure: np.ndarray) -> float:
    """Return the best normalised correlation of the figure, sized to the crop, within it.

    `crop` is the figure's region grown by `SHIFT` px on every side; the figure
    is resized to the region's own size and slid over that slack.
    """
    crop = gray(crop).astype(np.float32)
    h, w = crop.shape
    inner_w, inner_h = w - 2 * SHIFT, h - 2 * SHIFT
    if inner_w < 4 or inner_h < 4:
        return 0.0
    template = cv2.resize(figure, (inner_w, inner_h), interpolation=cv2.INTER_AREA)
    template = template.astype(np.float32)
    if float(template.std()) < 1.0 or float(crop.std()) < 1.0:
        return 0.0
    # Both softened by a pixel: the browser's resampling and ours put a thin line drawing's
    # strokes a fraction of a pixel apart, which alone costs a sparse figure a tenth.
    crop = cv2.GaussianBlur(crop, (0, 0), TEMPLATE_BLUR)
    template = cv2.GaussianBlur(template, (0, 0), TEMPLATE_BLUR)
    result = cv2.matchTemplate(crop, template, cv2.TM_CCOEFF_NORMED)
    score = float(np.nanmax(result)) if result.size else 0.0
    return max(0.0, min(1.0, score))


@dataclass(frozen=True)
class FeatureMatch:
    """Where feature matching put the figure: inlier share and the projected outline."""

    score: float
    inliers: int
    keypoints: int
    outline: tuple[tuple[float, float], ...]


_SIFT = None


def sift() -> cv2.SIFT:
    """Return the shared SIFT detector (made once: creating one is not free)."""
    global _SIFT
    if _SIFT is None:
        _SIFT = cv2.SIFT_create(nfeatures=1500)
    return _SIFT


def _upscaled(figure: np.ndarray, min_side: int = 300) -> np.ndarray:
    side = min(figure.shape[:2])
    if side >= min_side:
        return figure
    factor = min_side / max(1, side)
    return cv2.resize(figure, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC)


def feature_match(image: np.ndarray, figure: np.ndarray) -> FeatureMatch:
    """Return how well the figure's SIFT features map into the image under one homography."""
    detector = sift()
    source = _upscaled(figure)
    kp_s, des_s = detector.detectAndCompute(source, None)
    kp_i, des_i = detector.detectAndCompute(gray(image), None)
    if des_s is None or des_i is None or len(kp_s) < 8 or len(kp_i) < 8:
        return FeatureMatch(0.0, 0, len(kp_s or ()), ())
    matcher = cv2.BFMatcher(cv2.NORM_L2)
    pairs = matcher.knnMatch(des_s, des_i, k=2)
    good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < 0.75 * p[1].distance]
    if len(good) < 8:
        return FeatureMatch(0.0, len(good), len(kp_s), ())
    src = np.float32([kp_s[m.queryIdx].pt for m in good]).reshape(-1, 1, 2)
    dst = np.float32([kp_i[m.trainIdx].pt for m in good]).reshape(-1, 1, 2)
    homography, mask = cv2.findHomography(src, dst, cv2.RANSAC, 5.0)
    if homography is None or mask is None:
        return FeatureMatch(0.0, 0, len(kp_s), ())
    inliers = int(mask.sum())
    h, w = source.shape[:2]
    corners = np.float32([[0, 0], [w, 0], [w, h], [0, h]]).reshape(-1, 1, 2)
    outline = cv2.perspectiveTransform(corners, homography).reshape(-1, 2)
    # Share of the figure's matchable features that agree on one placement;
    # a quarter of all keypoints agreeing is already an unmistakable match.
    score = min(1.0, inliers / max(8.0, 0.25 * len(kp_s)))
    return FeatureMatch(score, inliers, len(kp_s), tuple((float(x), float(y)) for x, y in outline))


def figure_content(crop: np.ndarray) -> float:
    """Return the grey-level standard deviation of a crop (near 0 for an empty box).

    Under `figure_blank_std` the box counts as empty.
    """
    grey = gray(crop)
    return float(grey.std()) if grey.size else 0.0
