"""The rows of an output set's manifest: the fields every job has, and load failures.

Every backend and executor writes the same rows, so an output folder looks
the same whatever made its images.
"""

from __future__ import annotations

from typing import Any

from itemshot.renderer.jobs import Job, PlanFailure

MANIFEST = "manifest.jsonl"
SUMMARY = "summary.json"


def base_row(job: Job, backend: str = "chromium") -> dict[str, Any]:
    """Return the manifest fields every row of a job has, rendered or not."""
    item = job.item
    return {
        "item_id": item.id,
        "job_key": job.key,
        "seed": job.seed,
        "condition": dict(job.condition),
        "content": job.content.as_dict(),
        "question": item.question,
        "options": list(item.options),
        "answer": item.answer_letter,
        "n_options": len(item.options),
        "subject": item.subject,
        "language": item.language,
        "presentation": job.presentation.as_dict(),
        "backend": backend,
        "image": None,
        "layout": None,
        "status": "pending",
        "error": None,
    }


def failure_row(failure: PlanFailure) -> dict[str, Any]:
    """Return the manifest row of a request that never became a job."""
    return {
        "item_id": failure.item_id,
        "condition": dict(failure.condition),
        "status": "failed",
        "stage": "load",
        "image": None,
        "error": {**failure.error.as_record(), "reason": "invalid_item"},
    }
