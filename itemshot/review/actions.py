"""Decisions the review app makes many at a time: bulk accepts, certification, undo.

Each builds log lines only (one per image, sharing a batch id); the caller
logs them with `ReviewLog.append_many` and folds them into its index.
"""

from __future__ import annotations

from collections.abc import Iterable

from itemshot.factorial.review.log import Decision, ReviewState, utc_now
from itemshot.review.certify import CERTIFIED_BASIS
from itemshot.review.index import Entry


def bulk_accepts(
    entries: Iterable[Entry], reviewer: str, batch: str, note: str = ""
) -> list[Decision]:
    """Return one accept per image of a filtered selection, all in batch `batch`."""
    return _accepts(entries, reviewer, batch, note)


def certified_accepts(
    entries: Iterable[Entry], reviewer: str, batch: str, sample: str
) -> list[Decision]:
    """Return the acceptances "by verifier, certified by sample" of unsampled passed images."""
    return _accepts(
        entries,
        reviewer,
        batch,
        "accepted by verifier, certified by sample",
        basis=CERTIFIED_BASIS,
        sample=sample,
    )


def _accepts(
    entries: Iterable[Entry], reviewer: str, batch: str, note: str, **fields: str
) -> list[Decision]:
    """Return one accept per entry, all in batch `batch`, with any further Decision `fields`."""
    now = utc_now()
    return [
        Decision(
            id=f"{batch}-{entry.position}",
            image=entry.image,
            action="accept",
            reviewer=reviewer,
            time=now,
            job_key=entry.job_key,
            item_id=entry.item_id,
            note=note,
            batch=batch,
            **fields,
        )
        for entry in entries
    ]


def undos(state: ReviewState, reviewer: str, undo_id: str) -> list[Decision]:
    """Return the undo lines for the reviewer's last decision (its whole batch, if it had one).

    Empty when the reviewer has nothing left to undo.
    """
    last = state.last_decision(reviewer)
    if last is None:
        return []
    taken = state.in_batch(last.batch) if last.batch else [last]
    now = utc_now()
    return [
        Decision(
            id=f"{undo_id}-{number}" if len(taken) > 1 else undo_id,
            image=decision.image,
            action="undo",
            reviewer=reviewer,
            time=now,
            job_key=decision.job_key,
            item_id=decision.item_id,
            undoes=decision.id,
            batch=undo_id if len(taken) > 1 else "",
        )
        for number, decision in enumerate(taken)
    ]
