"""Review progress and agreement: counts, pass rates by group, verifier precision and recall,
time per decision, Cohen's κ."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from itemshot.factorial.review.log import STATUSES, VERDICTS, Decision, ReviewState
from itemshot.review.index import FACETS, VERDICT_CODES, ReviewIndex

# The groups /stats breaks the figures down by (subject has its own filter but is no factor).
GROUPS = tuple(name for name in FACETS if name != "subject")


@dataclass(frozen=True)
class Agreement:
    """Two reviewers on the images both decided: how often they agree, and Cohen's κ."""

    first: str
    second: str
    images: int
    agreed: int
    kappa: float | None  # None when undefined (fewer than one image, or chance agreement 1)

    @property
    def observed(self) -> float | None:
        """Return the share of images on which they agree."""
        return self.agreed / self.images if self.images else None


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Return Cohen's κ of two raters' labels over the same items (None when undefined)."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    left, right = Counter(first), Counter(second)
    chance = sum(left[label] * right[label] for label in left) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def agreements(state: ReviewState) -> list[Agreement]:
    """Return the agreement of every pair of reviewers (accept / reject / flag, latest votes)."""
    reviewers = sorted({r for review in state.images.values() for r in review.votes})
    pairs: list[Agreement] = []
    for first, second in combinations(reviewers, 2):
        labels = [
            (review.votes[first].action, review.votes[second].action)
            for review in state.images.values()
            if first in review.votes and second in review.votes
        ]
        a = [x for x, _ in labels]
        b = [y for _, y in labels]
        agreed = sum(x == y for x, y in labels)
        pairs.append(Agreement(first, second, len(labels), agreed, cohen_kappa(a, b)))
    return pairs


def decision_times(decisions: Sequence[Decision]) -> dict[str, dict[str, float | int]]:
    """Return, per reviewer and for everyone, decisions timed and median/mean/p90 seconds."""
    by_reviewer: dict[str, list[float]] = {}
    for decision in decisions:
        if decision.action in VERDICTS and decision.seconds is not None:
            by_reviewer.setdefault(decision.reviewer, []).append(decision.seconds)
    everyone = [s for times in by_reviewer.values() for s in times]
    result: dict[str, dict[str, float | int]] = {}
    for name, times in [*sorted(by_reviewer.items()), ("everyone", everyone)]:
        if times:
            result[name] = {
                "decisions": len(times),
                "median": statistics.median(times),
                "mean": statistics.fmean(times),
                "p90": float(np.percentile(times, 90)),
            }
    return result


def progress(index: ReviewIndex) -> dict[str, Any]:
    """Return reviewed/total, status counts, and human and verifier pass rates by scene and backend.

    The human pass rate is accepted / (accepted + rejected); flagged and
    conflicting images are counted but not in the rate.
    """
    statuses = index.statuses
    total = len(statuses)
    counts = {s: int((statuses == i).sum()) for i, s in enumerate(STATUSES)}
    groups = {name: _by_group(index, name) for name in GROUPS}
    accepted_all = counts["accepted"]
    decided_all = accepted_all + counts["rejected"]
    worst = {
        name: min(
            (r for r in rows if r["pass_rate"] is not None),
            key=lambda r: r["pass_rate"],
            default=None,
        )
        for name, rows in groups.items()
    }
    fail = VERDICT_CODES.index("fail")
    passed = VERDICT_CODES.index("pass")
    accepted, rejected = STATUSES.index("accepted"), STATUSES.index("rejected")
    verifier_vs_human = {
        f"{v}/{h}": int(((index.verdicts == vc) & (statuses == hc)).sum())
        for v, vc in (("pass", passed), ("fail", fail))
        for h, hc in (("accepted", accepted), ("rejected", rejected))
    }
    return {
        "total": total,
        "reviewed": total - counts["unreviewed"],
        "statuses": counts,
        "groups": groups,
        "pass_rate": accepted_all / decided_all if decided_all else None,
        "worst": {name: row["value"] if row else None for name, row in worst.items()},
        "verifier_vs_human": verifier_vs_human,
        "not_rendered": index.not_rendered,
    }


def _by_group(index: ReviewIndex, name: str) -> list[dict[str, Any]]:
    column = index.facet_columns[name]
    values = index.facets[name].values
    statuses = index.statuses
    rows = []
    for code, value in enumerate(values):
        member = column == code
        accepted = int((member & (statuses == STATUSES.index("accepted"))).sum())
        rejected = int((member & (statuses == STATUSES.index("rejected"))).sum())
        verified = member & (index.verdicts != VERDICT_CODES.index("unverified"))
        verifier_pass = int((verified & (index.verdicts == VERDICT_CODES.index("pass"))).sum())
        reviewed = int((member & (statuses != STATUSES.index("unreviewed"))).sum())
        rows.append(
            {
                "value": value or "(none)",
                "images": int(member.sum()),
                "reviewed": reviewed,
                "accepted": accepted,
                "rejected": rejected,
                "pass_rate": accepted / (accepted + rejected) if accepted + rejected else None,
                "verifier_pass_rate": verifier_pass / int(verified.sum())
                if verified.any()
                else None,
            }
        )
    return sorted(rows, key=lambda r: (-r["images"], r["value"]))


def conflicts(index: ReviewIndex) -> list[dict[str, Any]]:
    """Return the current images on which reviewers disagree, with each one's decision."""
    found = []
    for position in np.flatnonzero(index.statuses == STATUSES.index("conflict")):
        entry = index.entry(int(position))
        review = index.state.review_of(entry.image)
        found.append(
            {
                "entry": entry,
                "votes": sorted(review.votes.values(), key=lambda d: d.reviewer),
            }
        )
    return found


def _interval(hits: int, total: int) -> tuple[float | None, float | None, float | None]:
    """Return (share, exact 95% lower, upper) of hits in total (Nones when total is 0)."""
    if not total:
        return None, None, None
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(hits, total, alpha=0.05, method="beta")
    return hits / total, float(low), float(high)


def verifier_quality(index: ReviewIndex) -> dict[str, list[dict[str, Any]]]:
    """Return the verifier's precision and recall against the reviewers, overall and per group.

    A pass is the verifier saying "this image is right"; the truth is a
    person's accept or reject (certified acceptances are the verifier's own
    word and are left out). Precision: the share of verifier passes reviewers
    accepted; recall: the share of reviewer-accepted images the verifier
    passed. Both with exact (Clopper–Pearson) 95% intervals.
    """
    state = index.set_state()
    by_hand = np.fromiter((state.by_hand(image) for image in index.images), bool, len(index))
    accepted = by_hand & (index.statuses == STATUSES.index("accepted"))
    rejected = by_hand & (index.statuses == STATUSES.index("rejected"))
    passed = index.verdicts == VERDICT_CODES.index("pass")
    failed = index.verdicts == VERDICT_CODES.index("fail")

    def quality(value: str, member: np.ndarray) -> dict[str, Any]:
        return _quality_of(value, member, passed, failed, accepted, rejected)

    everything = np.ones(len(index), dtype=bool)
    result: dict[str, list[dict[str, Any]]] = {"all": [quality("all", everything)]}
    for name in GROUPS:
        column = index.facet_columns[name]
        rows = [
            quality(value or "(none)", column == code)
            for code, value in enumerate(index.facets[name].values)
        ]
        result[name] = sorted(rows, key=lambda r: (-r["decided"], r["value"]))
    return result


def _quality_of(
    value: str,
    member: np.ndarray,
    passed: np.ndarray,
    failed: np.ndarray,
    accepted: np.ndarray,
    rejected: np.ndarray,
) -> dict[str, Any]:
    true_pass = int((member & passed & accepted).sum())
    false_pass = int((member & passed & rejected).sum())
    false_fail = int((member & failed & accepted).sum())
    true_fail = int((member & failed & rejected).sum())
    precision = _interval(true_pass, true_pass + false_pass)
    recall = _interval(true_pass, true_pass + false_fail)
    return {
        "value": value,
        "decided": true_pass + false_pass + false_fail + true_fail,
        "pass_accepted": true_pass,
        "pass_rejected": false_pass,
        "fail_accepted": false_fail,
        "fail_rejected": true_fail,
        "precision": precision[0],
        "precision_ci": precision[1:],
        "recall": recall[0],
        "recall_ci": recall[1:],
    }
