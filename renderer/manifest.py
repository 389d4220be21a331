"""The manifest's file name and the row of a request that never became a job, for older imports.

The manifest row is `itemshot.outputs.ManifestRow` and its files are read and
written by `itemshot.outputs` only. Two modules of `itemshot.factorial` still
import these names from here (the renderer may not import `itemshot.outputs`);
this module goes once they import `itemshot.outputs` instead.
"""

from __future__ import annotations

from typing import Any

from itemshot.renderer.jobs import PlanFailure

MANIFEST = "manifest.jsonl"


def failure_row(failure: PlanFailure) -> dict[str, Any]:
    """Return the manifest row of a request that never became a job (as `ManifestRow`'s)."""
    return {
        "item_id": failure.item_id,
        "condition": dict(failure.condition),
        "status": "failed",
        "stage": "load",
        "image": None,
        "error": {**failure.error.as_record(), "reason": "invalid_item"},
    }
