"""Find a source figure in an image without a layout record, and check that it is that figure.

Two steps:

1. **Localise.** Candidate placements (homographies from the figure's pixels
   to the image's) come from SIFT features matched into the image — RANSAC,
   repeated on the matches the previous fit left unexplained so that a second
   instance is found too, and once more with the ambiguous matches of
   repeated structures kept — and, for figures with few features (simple line
   drawings), from multi-scale template matching refined at a finer scale.
2. **Verify.** Each candidate is checked densely: the image is warped back
   into the figure's frame at the size it is shown, a brightness/contrast map
   (gain and offset, each allowed to vary linearly across the figure, as the
   light of a photo does) is fitted by least squares, and the residual is
   measured tile by tile on a grid of `GRID` tiles along the long side. The
   score is 1 − the second-worst tile's RMS residual in units of the figure's
   contrast (its grey-level standard deviation), clipped to [0, 1]. A failed
   candidate is refined by ECC image alignment and checked again.

Why not the share of inlier features, or one correlation: charts drawn in one
style share most of their features (axes, tick labels, category names), and a
figure's own text labels ("12 V") match the same words in the question text,
so a swapped figure still gets inliers; and two such charts correlate highly
as wholes. A replaced figure, or a chart whose bars differ, leaves several
tiles far off, while the genuine figure after resampling, blur, noise, JPEG
and a mild perspective stays within a fraction of its contrast in every tile.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from itemshot.verify.checks.figures import sift
from itemshot.verify.page.crops import gray
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds

GRID = 8  # tiles along the figure's long side
COMPARE_SIDE = 360  # px: the long side at which a candidate is compared (at most)
BLUR = 1.0  # px: smoothing of both sides before comparing (sub-pixel misalignment)
INSTANCES = 3  # RANSAC fits per match set (one per instance found)
TEMPLATE_CANDIDATES = 3
# Which matches, placements and fits count (Lowe's ratio, the fewest inliers, the shortest
# side, the most tilt, corner skew and aspect change, the least gain) is decided by the
# `figure_search_*` fields of `Thresholds`.
MAX_REFINE_SHIFT = 0.25  # ECC may move a corner by at most this share of the shorter side


@dataclass(frozen=True)
class Presence:
    """The best placement found for a figure, and how well the image there matches it."""

    score: float  # 1 - the second-worst tile residual; 0 when nothing was found
    method: str  # "features", "template" (how it was localised; "+ecc" when refined) or "none"
    outline: tuple[tuple[float, float], ...]  # the figure's corners in image px
    worst_tiles: tuple[float, ...]  # the largest tile residuals, in figure-contrast units
    candidates: int  # placements checked


NOT_FOUND = Presence(0.0, "none", (), (), 0)


@lru_cache(maxsize=64)
def _features(digest: bytes, data: bytes, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Return SIFT keypoints (in figure px) and descriptors of a figure, upscaled when small."""
    figure = np.frombuffer(data, dtype=np.uint8).reshape(shape)
    factor = max(1.0, 300 / max(1, min(shape)))
    source = figure
    if factor > 1.0:
        source = cv2.resize(figure, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC)
    keypoints, descriptors = sift().detectAndCompute(source, None)
    points = np.float32([k.pt for k in keypoints]).reshape(-1, 2) / factor
    return points, descriptors


def _figure_features(figure: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    data = np.ascontiguousarray(figure, dtype=np.uint8).tobytes()
    digest = hashlib.sha1(data).digest()
    return _features(digest, data, (int(figure.shape[0]), int(figure.shape[1])))


def _outline(matrix: np.ndarray, figure: np.ndarray) -> np.ndarray:
    h, w = figure.shape[:2]
    corners = np.float32([[0, 0], [w, 0], [w, h], [0, h]]).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(corners, matrix).reshape(-1, 2)


class FigureSearch:
    """One image, prepared once, in which any number of figures are searched.

    `thresholds` decide which matches and placements count and what a
    placement scores (`figure_search_*`).
    """

    def __init__(self, image: np.ndarray, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> None:
        self.thresholds = thresholds
        self.grey = gray(image)
        self.grey32 = self.grey.astype(np.float32)
        self._keypoints: tuple[np.ndarray, np.ndarray | None] | None = None
        self._scaled: dict[int, tuple[np.ndarray, float]] = {}

    def find(self, figure: np.ndarray, accept: float) -> Presence:
        """Return the best placement of a grey figure; stop at the first scoring `accept` or more."""
        best = NOT_FOUND
        seen: list[np.ndarray] = []
        checked = 0
        for method, matrix in self._candidates(figure):
            if not self._plausible(matrix, figure) or _repeated(matrix, figure, seen):
                continue
            seen.append(matrix)
            checked += 1
            found = self._verify(figure, matrix, method)
            if found.score < accept:
                refined = self._refine(figure, matrix)
                if (
                    refined is not None
                    and self._plausible(refined, figure)
                    and _near(refined, matrix, figure)
                ):
                    again = self._verify(figure, refined, method + "+ecc")
                    found = again if again.score > found.score else found
            if found.score > best.score or best is NOT_FOUND:
                best = found
            if best.score >= accept:
                break
        return Presence(best.score, best.method, best.outline, best.worst_tiles, checked)

    # Localisation --------------------------------------------------------------------------

    def _candidates(self, figure: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
        """Yield (method, homography) placements: feature fits first, template ones if needed."""
        for matrix in self._feature_candidates(figure):
            yield "features", matrix
        for matrix in self._template_candidates(figure):
            yield "template", matrix

    def _image_features(self) -> tuple[np.ndarray, np.ndarray | None]:
        if self._keypoints is None:
            keypoints, descriptors = sift().detectAndCompute(self.grey, None)
            points = np.float32([k.pt for k in keypoints]).reshape(-1, 2)
            self._keypoints = (points, descriptors)
        return self._keypoints

    def _feature_candidates(self, figure: np.ndarray) -> list[np.ndarray]:
        source, source_desc = _figure_features(figure)
        image, image_desc = self._image_features()
        if source_desc is None or image_desc is None or len(source) < 4 or len(image) < 4:
            return []
        distinct: list[tuple[int, int]] = []
        ambiguous: list[tuple[int, int]] = []
        for pair in cv2.BFMatcher(cv2.NORM_L2).knnMatch(source_desc, image_desc, k=2):
            if len(pair) < 2:
                continue
            best, second = pair
            if best.distance < self.thresholds.figure_search_ratio * second.distance:
                distinct.append((best.queryIdx, best.trainIdx))
            else:
                # A repeated structure (the same chart twice, say) fails the ratio test
                # for the genuine match too: both neighbours stay candidates for RANSAC.
                ambiguous += [(best.queryIdx, best.trainIdx), (second.queryIdx, second.trainIdx)]
        found: list[np.ndarray] = []
        min_inliers = int(self.thresholds.figure_search_min_inliers)
        for matches in (distinct, distinct + ambiguous):
            remaining = np.asarray(matches, dtype=np.int64).reshape(-1, 2)
            for _ in range(INSTANCES):
                if len(remaining) < min_inliers:
                    break
                matrix, mask = cv2.findHomography(
                    source[remaining[:, 0]], image[remaining[:, 1]], cv2.RANSAC, 4.0, maxIters=2000
                )
                if matrix is None or mask is None or int(mask.sum()) < min_inliers:
                    break
                found.append(matrix)
                remaining = remaining[mask.ravel() == 0]
        return found

    def _scaled_image(self, side: int) -> tuple[np.ndarray, float]:
        if side not in self._scaled:
            factor = min(1.0, side / max(self.grey.shape[:2]))
            small = self.grey32
            if factor < 1.0:
                small = cv2.resize(
                    self.grey, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA
                )
                small = small.astype(np.float32)
            self._scaled[side] = (small, factor)
        return self._scaled[side]

    def _template_candidates(self, figure: np.ndarray) -> list[np.ndarray]:
        """Return placements from a coarse multi-scale search refined at a finer scale."""
        coarse, factor = self._scaled_image(320)
        aspect = figure.shape[0] / max(1, figure.shape[1])
        peaks: list[tuple[float, float, float, int, int]] = []
        for share in np.geomspace(0.05, 0.95, 40):
            width = round(coarse.shape[1] * share)
            height = round(width * aspect)
            if min(width, height) < 10 or height >= coarse.shape[0] or width >= coarse.shape[1]:
                continue
            template = cv2.resize(figure, (width, height), interpolation=cv2.INTER_AREA)
            template = template.astype(np.float32)
            if float(template.std()) < 1.0:
                continue
            result = cv2.matchTemplate(coarse, template, cv2.TM_CCOEFF_NORMED)
            _, value, _, (x, y) = cv2.minMaxLoc(result)
            peaks.append((value, x + width / 2, y + height / 2, width, height))
        peaks.sort(key=lambda p: -p[0])
        picked: list[tuple[float, float, float, int, int]] = []
        for peak in peaks:
            _, cx, cy, _w, _h = peak
            if any(abs(cx - p[1]) < 0.3 * p[3] and abs(cy - p[2]) < 0.3 * p[4] for p in picked):
                continue
            picked.append(peak)
            if len(picked) >= TEMPLATE_CANDIDATES:
                break
        fine, fine_factor = self._scaled_image(960)
        found = []
        for _, cx, cy, w, _h in picked:
            ratio = fine_factor / factor
            matrix = self._fine_template(figure, fine, cx * ratio, cy * ratio, w * ratio)
            if matrix is not None:
                found.append(np.diag([1 / fine_factor, 1 / fine_factor, 1.0]) @ matrix)
        return found

    @staticmethod
    def _fine_template(
        figure: np.ndarray, image: np.ndarray, cx: float, cy: float, width: float
    ) -> np.ndarray | None:
        """Return the best placement near (cx, cy) at ±10% of `width` (figure px → `image` px)."""
        aspect = figure.shape[0] / max(1, figure.shape[1])
        best: tuple[float, int, int, int, int] | None = None
        for k in np.linspace(0.9, 1.1, 9):
            w = round(width * k)
            h = round(w * aspect)
            if min(w, h) < 8:
                continue
            x0 = max(0, int(cx - 0.75 * w) - 4)
            y0 = max(0, int(cy - 0.75 * h) - 4)
            window = image[y0 : y0 + h + h // 2 + 8, x0 : x0 + w + w // 2 + 8]
            if window.shape[0] < h or window.shape[1] < w:
                continue
            template = cv2.resize(figure, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
            if float(template.std()) < 1.0:
                continue
            _, value, _, (x, y) = cv2.minMaxLoc(
                cv2.matchTemplate(window, template, cv2.TM_CCOEFF_NORMED)
            )
            if best is None or value > best[0]:
                best = (value, x0 + x, y0 + y, w, h)
        if best is None:
            return None
        _, x, y, w, h = best
        fh, fw = figure.shape[:2]
        return np.array([[w / fw, 0.0, x], [0.0, h / fh, y], [0.0, 0.0, 1.0]])

    def _plausible(self, matrix: np.ndarray, figure: np.ndarray) -> bool:
        """Return whether a placement is how a figure can be shown: upright-ish, not sheared.

        A page is photographed at most somewhat tilted and in mild perspective;
        a fit that turns the figure sideways, shears it or squashes it is a
        match of something else (RANSAC on a few glyphs, ECC run away): the
        `figure_search_*` side, tilt, corner and aspect limits say how far.
        """
        t = self.thresholds
        outline = _outline(matrix, figure).astype(np.float64)
        if not np.isfinite(outline).all():
            return False
        if not cv2.isContourConvex(outline.astype(np.float32).reshape(-1, 1, 2)):
            return False
        edges = np.roll(outline, -1, axis=0) - outline  # top, right, bottom, left
        lengths = np.linalg.norm(edges, axis=1)
        area = self.grey.shape[0] * self.grey.shape[1]
        if lengths.min() < int(t.figure_search_min_side_px):
            return False
        if cv2.contourArea(outline.astype(np.float32)) > 2 * area:
            return False
        tilt = np.degrees(np.arctan2(edges[0, 1], edges[0, 0]))
        if abs(tilt) > t.figure_search_max_tilt:
            return False
        for a, b in ((0, 1), (1, 2), (2, 3), (3, 0)):
            cosine = -np.dot(edges[a], edges[b]) / (lengths[a] * lengths[b])
            if abs(cosine) > t.figure_search_max_corner_cosine:
                return False
        h, w = figure.shape[:2]
        shown = (lengths[0] + lengths[2]) / max(1e-6, lengths[1] + lengths[3])
        change = t.figure_search_max_aspect_change
        return 1 / change <= shown / (w / h) <= change

    # Verification --------------------------------------------------------------------------

    def _frame(
        self, matrix: np.ndarray, figure: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """Return the figure at comparison size, the map from there to image px, and the zoom."""
        h, w = figure.shape[:2]
        shown = float(
            np.sqrt(cv2.contourArea(_outline(matrix, figure).astype(np.float32)) / (w * h))
        )
        scale = min(1.0, shown, COMPARE_SIDE / max(w, h))
        wc, hc = max(8, round(w * scale)), max(8, round(h * scale))
        source = cv2.resize(figure, (wc, hc), interpolation=cv2.INTER_AREA).astype(np.float32)
        to_image = matrix @ np.diag([w / wc, h / hc, 1.0])
        return source, to_image, shown / scale

    def _verify(self, figure: np.ndarray, matrix: np.ndarray, method: str) -> Presence:
        source, to_image, zoom = self._frame(matrix, figure)
        hc, wc = source.shape
        outline = _outline(matrix, figure)
        x0, y0 = np.floor(outline.min(axis=0)).astype(int) - 8
        x1, y1 = np.ceil(outline.max(axis=0)).astype(int) + 8
        x0, y0 = max(0, x0), max(0, y0)
        patch = self.grey32[y0 : max(y0 + 1, y1), x0 : max(x0 + 1, x1)]
        if (
            zoom > 1.5
        ):  # shown larger than compared: low-pass first so that warping down does not alias
            patch = cv2.GaussianBlur(patch, (0, 0), 0.5 * zoom)
        shift = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0], [0.0, 0.0, 1.0]])
        seen = cv2.warpPerspective(
            patch,
            shift @ to_image,
            (wc, hc),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )
        score, worst = tile_score(source, seen, self.thresholds)
        corners = tuple((float(x), float(y)) for x, y in outline)
        return Presence(score, method, corners, worst, 1)

    def _refine(self, figure: np.ndarray, matrix: np.ndarray) -> np.ndarray | None:
        """Return the placement refined by ECC alignment (None when it does not converge)."""
        source, to_image, _ = self._frame(matrix, figure)
        warp = (to_image / to_image[2, 2]).astype(np.float32)
        try:
            _, warp = cv2.findTransformECC(
                source,
                self.grey32,
                warp,
                cv2.MOTION_HOMOGRAPHY,
                (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 40, 1e-4),
                None,
                3,
            )
        except cv2.error:
            return None
        h, w = figure.shape[:2]
        hc, wc = source.shape
        return warp.astype(np.float64) @ np.diag([wc / w, hc / h, 1.0])


def tile_score(
    source: np.ndarray, seen: np.ndarray, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> tuple[float, tuple[float, ...]]:
    """Return 1 - the second-worst tile residual of `seen` against `source`, and the worst ones.

    Both are smoothed by `BLUR` px; `seen` is explained as gain × source +
    offset with gain and offset linear across the figure (least squares); each
    tile's RMS residual is divided by gain × the source's standard deviation.
    A gain under `figure_search_min_gain` scores 0.
    """
    source = cv2.GaussianBlur(source.astype(np.float32), (0, 0), BLUR)
    seen = cv2.GaussianBlur(seen.astype(np.float32), (0, 0), BLUR)
    spread = float(source.std())
    if spread < 1.0:
        return 0.0, ()
    hc, wc = source.shape
    ys, xs = np.mgrid[0:hc, 0:wc].astype(np.float32)
    xs, ys = (xs / wc - 0.5).ravel(), (ys / hc - 0.5).ravel()
    flat = source.ravel()
    design = np.stack([flat, flat * xs, flat * ys, np.ones_like(flat), xs, ys], axis=1)
    coef, *_ = np.linalg.lstsq(design, seen.ravel(), rcond=None)
    gain = float(coef[0])
    if gain < thresholds.figure_search_min_gain:
        return 0.0, ()
    residual = ((seen.ravel() - design @ coef) / (gain * spread)).reshape(hc, wc)
    side = max(hc, wc) / GRID
    rows = np.linspace(0, hc, max(1, round(hc / side)) + 1).astype(int)
    cols = np.linspace(0, wc, max(1, round(wc / side)) + 1).astype(int)
    errors = sorted(
        (
            float(np.sqrt(np.mean(np.square(residual[r0:r1, c0:c1]))))
            for r0, r1 in itertools.pairwise(rows)
            for c0, c1 in itertools.pairwise(cols)
            if r1 > r0 and c1 > c0
        ),
        reverse=True,
    )
    # The second-worst tile decides: one odd tile (a glare spot, a pen mark) is forgiven.
    decisive = errors[min(1, len(errors) - 1)]
    return max(0.0, min(1.0, 1.0 - decisive)), tuple(round(e, 3) for e in errors[:4])


def _repeated(matrix: np.ndarray, figure: np.ndarray, seen: list[np.ndarray]) -> bool:
    """Return whether a placement's corners are within 2 px of one already checked."""
    corners = _outline(matrix, figure)
    return any(np.abs(_outline(other, figure) - corners).max() < 2.0 for other in seen)


def _near(refined: np.ndarray, matrix: np.ndarray, figure: np.ndarray) -> bool:
    """Return whether a refinement stayed a refinement (no corner moved far)."""
    before, after = _outline(matrix, figure), _outline(refined, figure)
    side = np.linalg.norm(np.roll(before, -1, axis=0) - before, axis=1).min()
    return float(np.abs(after - before).max()) <= MAX_REFINE_SHIFT * side
