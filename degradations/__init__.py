"""Capture simulation: screenshots, phone photos and scans of a clean render, replayable.

Public surface: `capture`, `replay`, `capture_layout`, `Captured`, `PRESETS`,
`SEVERITIES` and `TABLE` (the parameter ranges; the documented table is in
`degradations.presets`).
"""

from degradations.capture import Captured, capture, capture_layout, replay
from degradations.presets import PRESETS, SEVERITIES, TABLE

__all__ = ["PRESETS", "SEVERITIES", "TABLE", "Captured", "capture", "capture_layout", "replay"]
