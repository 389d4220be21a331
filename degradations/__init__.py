"""Capture simulation: screenshots, phone photos and scans of a clean render, replayable.

Public surface: `capture`, `replay`, `capture_layout`, `Captured`, `PRESETS`,
`SEVERITIES` and `TABLE` (the parameter ranges; the documented table is in
`degradations.presets`).
"""

from __future__ import annotations

from itemshot.lazy import lazy_exports

# Public name -> module; imported on first use so that importing one small module
# of this package (a constant, a record) does not load OpenCV, SciPy or tesseract.
_EXPORTS = {
    "Captured": "itemshot.degradations.capturing",
    "PRESETS": "itemshot.degradations.presets",
    "SEVERITIES": "itemshot.degradations.presets",
    "TABLE": "itemshot.degradations.presets",
    "capture": "itemshot.degradations.capturing",
    "capture_layout": "itemshot.degradations.capturing",
    "replay": "itemshot.degradations.capturing",
}

__all__ = ["PRESETS", "SEVERITIES", "TABLE", "Captured", "capture", "capture_layout", "replay"]


__getattr__ = lazy_exports(__name__, _EXPORTS)
