"""Where a field's text sits in a page's OCR text: semi-global alignment.

A fixed-length window (the needle's own length) cuts a field short whenever
the page holds more characters than the source: a figure reference drawn as
"Figure 1", a formula read as letters, a word split by OCR. Semi-global
alignment lets the window start and end anywhere in the page and grow or
shrink freely. Its cost is an edit distance in which a page character the
field lacks costs `EXTRA` (less than a field character the page lacks, 1):
with equal costs the cheapest window would rather drop the field's first
words than span a formula the source writes as LaTeX.
"""

from __future__ import annotations

import numpy as np

EXTRA = 0.25  # cost of a page character between the field's characters


def _codes(text: str) -> np.ndarray:
    """Return one case-folded code point per character (length kept, so indices still match)."""
    return np.fromiter((ord((c.casefold() or c)[0]) for c in text), dtype=np.int64, count=len(text))


def _best_end(needle: np.ndarray, haystack: np.ndarray) -> tuple[int, float]:
    """Return (end, cost) of the cheapest match of `needle` ending anywhere in `haystack`.

    One row of the cost table per needle character, the first row all zeros
    (the match may start anywhere). Page characters skipped along a row are
    resolved with a running minimum: D[j] = min_k (C[k] + EXTRA (j - k)).
    """
    n = len(haystack)
    steps = np.arange(n + 1, dtype=np.float64) * EXTRA
    row = np.zeros(n + 1, dtype=np.float64)
    for code in needle:
        candidate = np.empty(n + 1, dtype=np.float64)
        candidate[0] = row[0] + 1.0
        candidate[1:] = np.minimum(row[:-1] + (haystack != code), row[1:] + 1.0)
        row = np.minimum.accumulate(candidate - steps) + steps
    end = int(np.argmin(row))
    return end, float(row[end])


def best_window(needle: str, haystack: str) -> tuple[int, int, float]:
    """Return (start, end, cost): `haystack[start:end]` is where `needle` aligns best.

    Letter case is ignored. Among equally cheap windows the one that ends
    first, and then the shortest, is returned.
    """
    if not needle or not haystack:
        return 0, 0, float(len(needle))
    a, b = _codes(needle), _codes(haystack)
    end, cost = _best_end(a, b)
    # The start is the end of the reversed needle's best match in the reversed prefix.
    back, _ = _best_end(a[::-1], b[:end][::-1])
    return end - back, end, cost
