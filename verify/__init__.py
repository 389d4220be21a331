"""Audits of an image against its source item: OCR round trip, figures, layout, report.

Public surface:

- `verify_output_set(out, *, items=None, thresholds=None, workers=None, on_progress=None)`
  verifies every rendered image of an output set and writes verdicts into its
  manifest, plus `audit.json` and `audit.html`.
- `verify_image(image, item, layout, ...)` verifies one image with a layout record.
- `audit_image(image, item, ...)` verifies one image without a layout record.
- `audit_images(images_dir, dataset, match=...)` audits a folder of external images.
"""

from verify.external import audit_image, audit_images
from verify.output_set import AuditSummary, verify_output_set
from verify.regions import verify_image
from verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from verify.verdicts import REASON_CODES, Reason, RegionScore, Verdict

__all__ = [
    "DEFAULT_THRESHOLDS",
    "REASON_CODES",
    "AuditSummary",
    "Reason",
    "RegionScore",
    "Thresholds",
    "Verdict",
    "audit_image",
    "audit_images",
    "verify_image",
    "verify_output_set",
]
