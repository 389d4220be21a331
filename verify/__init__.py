"""Audits of an image against its source item: OCR round trip, figures, layout, report.

Public surface:

- `verify_output_set(out, *, items=None, thresholds=None, workers=None, on_progress=None)`
  verifies every rendered image of an output set and writes verdicts into its
  manifest, plus `audit.json` and `audit.html`.
- `verify_image(image, item, layout, ...)` verifies one image with a layout record.
- `audit_image(image, item, ...)` verifies one image without a layout record.
- `audit_images(images_dir, dataset, match=...)` audits a folder of external images.
"""

from __future__ import annotations

from itemshot.lazy import lazy_exports

# Public name -> module; imported on first use so that importing one small module
# of this package (a constant, a record) does not load OpenCV, SciPy or tesseract.
_EXPORTS = {
    "AuditSummary": "itemshot.verify.output_set",
    "DEFAULT_THRESHOLDS": "itemshot.verify.thresholds",
    "REASON_CODES": "itemshot.verify.verdicts",
    "Reason": "itemshot.verify.verdicts",
    "ReasonCode": "itemshot.verify.verdicts",
    "RegionScore": "itemshot.verify.verdicts",
    "Thresholds": "itemshot.verify.thresholds",
    "Verdict": "itemshot.verify.verdicts",
    "audit_image": "itemshot.verify.external",
    "audit_images": "itemshot.verify.external",
    "verify_image": "itemshot.verify.modes.regions",
    "verify_output_set": "itemshot.verify.output_set",
}

__all__ = [
    "DEFAULT_THRESHOLDS",
    "REASON_CODES",
    "AuditSummary",
    "Reason",
    "ReasonCode",
    "RegionScore",
    "Thresholds",
    "Verdict",
    "audit_image",
    "audit_images",
    "verify_image",
    "verify_output_set",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
