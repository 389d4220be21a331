"""Certified review: a seeded audit sample of verifier-passed images and the bound it reaches.

A set is certified when a person has reviewed every image the verifier did
not pass, and a random sample of the images it passed, large enough that the
exact (Clopper–Pearson) one-sided upper bound on the defect rate among the
passed images is at most the target rate R at confidence C. The unsampled
passes are then accepted "by verifier, certified by sample", one log line
per image naming the sample. Among the accepted images, those a person
reviewed carry no known defect and the rest come from the passed images, so
the bound on the passed images' defect rate bounds the accepted images'
rate too. Sampling without replacement from a finite set makes the binomial
bound conservative.

A defect in the sample raises the bound: the sample grows (the next images
of the same seeded draw order) to the size that reaches R with the defects
found, unless that size exceeds the passed images or the defect rate is
significantly above R, when the verifier is not to be trusted on the set.

No web dependency: the review app, `itemshot certify` and the export use it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from itemshot.factorial.review.log import ReviewState, replaced_row
from itemshot.outputs import read_manifest
from itemshot.renderer.output import atomic_write_json
from itemshot.renderer.seeds import stable_hash
from itemshot.review.records import read_json, verdict_of

SAMPLE_FILE = "certification.json"
# The `basis` of an acceptance that the certification made (not a person looking at the image).
CERTIFIED_BASIS = "certified_by_sample"
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 0
# Statuses a hand review leaves an image in once it is decided (flagged and conflict are not).
DECIDED = ("accepted", "rejected")


def check_target(max_defect_rate: float, confidence: float) -> None:
    """Raise ValueError unless 0 < R < 1 and 0.5 < C < 1 (a one-sided bound needs C > ½)."""
    if not 0.0 < max_defect_rate < 1.0:
        raise ValueError(f"the maximum defect rate must be between 0 and 1, not {max_defect_rate}")
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"the confidence must be between 0.5 and 1, not {confidence}")


# -- the exact binomial bound ---------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def _interval(defects: int, reviewed: int, confidence: float) -> tuple[float, float]:
    """Return the one-sided Clopper–Pearson (lower, upper) bounds at `confidence`."""
    from statsmodels.stats.proportion import proportion_confint

    # The two-sided exact interval at 2C − 1 has the one-sided C bounds as its ends.
    low, high = proportion_confint(defects, reviewed, alpha=2 * (1 - confidence), method="beta")
    return float(low), float(high)


def upper_bound(defects: int, reviewed: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """Return the exact upper bound on the defect rate after `defects` in `reviewed` (1 with none)."""
    if reviewed <= 0:
        return 1.0
    return _interval(defects, reviewed, confidence)[1]


def lower_bound(defects: int, reviewed: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """Return the exact lower bound on the defect rate after `defects` in `reviewed` (0 with none)."""
    if reviewed <= 0:
        return 0.0
    return _interval(defects, reviewed, confidence)[0]


@functools.lru_cache(maxsize=4096)
def sample_size(
    max_defect_rate: float,
    confidence: float = DEFAULT_CONFIDENCE,
    defects: int = 0,
    limit: int | None = None,
) -> int | None:
    """Return the smallest sample whose exact upper bound with `defects` found is ≤ R.

    None when that takes more than `limit` images (the passed images there are).
    """
    check_target(max_defect_rate, confidence)
    ceiling = limit if limit is not None else 10**8

    def reached(n: int) -> bool:
        return upper_bound(defects, n, confidence) <= max_defect_rate

    low = defects + 1  # the bound falls as the sample grows with the defects fixed
    high = low
    while not reached(high):
        if high >= ceiling:
            return None
        low, high = high + 1, min(ceiling, high * 2)
    while low < high:
        middle = (low + high) // 2
        if reached(middle):
            high = middle
        else:
            low = middle + 1
    return high


# -- the sample -------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """A seeded draw order over the verifier-passed images, and how much of it is drawn."""

    id: str
    seed: int
    max_defect_rate: float
    confidence: float
    order: tuple[str, ...]  # the passed images when the sample was drawn, in draw order
    size: int  # the first `size` images of `order` are the sample
    history: tuple[int, ...] = ()  # every size the sample had, first to last

    @property
    def drawn(self) -> tuple[str, ...]:
        """Return the images in the sample."""
        return self.order[: self.size]

    @property
    def unsampled(self) -> tuple[str, ...]:
        """Return the passed images outside the sample."""
        return self.order[self.size :]

    def grown(self, size: int) -> Sample:
        """Return the sample drawn on to `size` images (the next ones of the same order)."""
        size = min(max(size, self.size), len(self.order))
        if size == self.size:
            return self
        return replace(self, size=size, history=(*self.history, size))

    def as_json(self) -> dict[str, Any]:
        """Return the sample's record (`certification.json`)."""
        return {
            "id": self.id,
            "seed": self.seed,
            "max_defect_rate": self.max_defect_rate,
            "confidence": self.confidence,
            "size": self.size,
            "history": list(self.history),
            "order": list(self.order),
        }

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> Sample:
        """Return the sample of its record; ValueError when it is not one."""
        try:
            order = tuple(str(image) for image in record["order"])
            sample = cls(
                id=str(record["id"]),
                seed=int(record["seed"]),
                max_defect_rate=float(record["max_defect_rate"]),
                confidence=float(record["confidence"]),
                order=order,
                size=int(record["size"]),
                history=tuple(int(n) for n in record.get("history") or ()),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{SAMPLE_FILE} is not a certification sample: {error}") from None
        if not 0 <= sample.size <= len(order):
            raise ValueError(f"{SAMPLE_FILE}: size {sample.size} outside 0..{len(order)}")
        check_target(sample.max_defect_rate, sample.confidence)
        return sample


def draw_sample(
    passed: Iterable[str],
    max_defect_rate: float,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Sample:
    """Return a seeded random sample of the passed images, sized for zero defects at (R, C).

    The draw order depends only on the seed and the set of images (not their
    order), so the same set and seed give the same sample.
    """
    check_target(max_defect_rate, confidence)
    population = sorted(set(passed))
    shuffled = np.random.default_rng(seed).permutation(len(population))
    order = tuple(population[int(i)] for i in shuffled)
    size = min(len(order), sample_size(max_defect_rate, confidence) or len(order))
    digest = stable_hash("certification-sample", seed, max_defect_rate, confidence, population)
    return Sample(
        id=f"sample-{digest[:12]}",
        seed=seed,
        max_defect_rate=max_defect_rate,
        confidence=confidence,
        order=order,
        size=size,
        history=(size,),
    )


def read_sample(out: Path) -> Sample | None:
    """Return OUT's audit sample (None when none was drawn); ValueError when it is unreadable."""
    path = Path(out) / SAMPLE_FILE
    if not path.exists():
        return None
    record = read_json(path)
    if not isinstance(record, Mapping):
        raise ValueError(f"{path} is not JSON")
    return Sample.from_json(record)


def write_sample(out: Path, sample: Sample) -> Path:
    """Write OUT's audit sample atomically; return its path."""
    path = Path(out) / SAMPLE_FILE
    atomic_write_json(path, sample.as_json())
    return path


# -- the set's state --------------------------------------------------------------------


@dataclass(frozen=True)
class SetState:
    """What certification needs of a set: current images' verdicts and every image's review.

    `verdicts` holds the images the set shows now (pass, fail or unverified),
    `statuses` the review status of any image decided (current or replaced),
    `certified` the images whose acceptance is a certification, with the sample's id.
    """

    verdicts: Mapping[str, str]
    statuses: Mapping[str, str] = field(default_factory=dict)
    certified: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, verdicts: Mapping[str, str], state: ReviewState) -> SetState:
        """Return the state of current images' verdicts under a folded review log."""
        statuses: dict[str, str] = {}
        certified: dict[str, str] = {}
        for image, review in state.images.items():
            statuses[image] = review.status
            sample = certification_of(review)
            if sample:
                certified[image] = sample
        return cls(dict(verdicts), statuses, certified)

    @classmethod
    def read(cls, out: Path) -> SetState:
        """Return the state of an output set from its manifest and review log."""
        state = ReviewState.from_log(Path(out))
        verdicts: dict[str, str] = {}
        for stored in read_manifest(Path(out)):
            row = replaced_row(stored, state)
            if row.get("status") == "ok" and row.get("image"):
                verdicts[str(row["image"])] = verdict_of(row)
        return cls.of(verdicts, state)

    def status(self, image: str) -> str:
        """Return an image's review status (unreviewed when nobody decided)."""
        return self.statuses.get(image, "unreviewed")

    def by_hand(self, image: str) -> bool:
        """Return whether a person decided the image (accepted or rejected it, not certified)."""
        return self.status(image) in DECIDED and image not in self.certified


def certification_of(review: Any) -> str:
    """Return the sample id when an image's deciding acceptance is a certification, else ''."""
    decisions = [review.adjudication] if review.adjudication is not None else []
    decisions = decisions or list(review.votes.values())
    if review.status != "accepted" or not decisions:
        return ""
    if all(getattr(d, "basis", "") == CERTIFIED_BASIS for d in decisions):
        return str(getattr(decisions[0], "sample", "") or "")
    return ""


# -- the assessment ---------------------------------------------------------------------


@dataclass(frozen=True)
class Assessment:
    """Where a certified review stands: the sample, the bound, what is left to do."""

    sample_id: str
    max_defect_rate: float
    confidence: float
    images: int  # images the set shows
    passed: int  # of them, verifier passes in the sample's draw order
    by_hand_required: int  # images outside the draw order (failed, unverified, replaced)
    by_hand_pending: int  # of them, not yet decided by a person
    sample_size: int  # images drawn
    sample_reviewed: int  # drawn images a person decided
    defects: int  # drawn images a person rejected
    bound: float  # exact upper bound on the passed images' defect rate so far
    lower: float  # exact lower bound (above R: the verifier is not to be trusted)
    needed: int | None  # sample size that reaches R with these defects (None: more than passed)
    unsampled: int  # current passed images outside the sample
    unsampled_pending: int  # of them, neither decided by hand nor certified
    certified_images: int  # images accepted by this sample's certification
    reviewed_by_hand: int  # current images a person decided
    accepted: int  # current images accepted (by hand or by certification)

    @property
    def sample_pending(self) -> int:
        """Return the drawn images not yet decided."""
        return self.sample_size - self.sample_reviewed

    @property
    def more(self) -> int | None:
        """Return how many more images to draw into the sample (None: sampling cannot reach R)."""
        return None if self.needed is None else max(0, self.needed - self.sample_size)

    @property
    def trusted(self) -> bool:
        """Return False when the verifier's passes cannot be certified on this set.

        That is when no sample of the passed images can reach R with the
        defects found, or, once the drawn sample is reviewed, when its lower
        bound shows the defect rate above R (judged on a whole sample only,
        not after every decision).
        """
        if self.needed is None:
            return False
        return self.sample_pending > 0 or self.lower <= self.max_defect_rate

    @property
    def reached(self) -> bool:
        """Return whether the sample is complete and its bound is at most R."""
        return self.sample_pending == 0 and self.bound <= self.max_defect_rate

    @property
    def ready(self) -> bool:
        """Return whether the unsampled passes may be accepted by certification now."""
        return self.reached and self.by_hand_pending == 0

    @property
    def certified(self) -> bool:
        """Return whether the set is certified: ready, and every unsampled pass is decided."""
        return self.ready and self.unsampled_pending == 0

    def next_step(self) -> str:
        """Return what the reviewer should do next, in one sentence."""
        if not self.trusted:
            return (
                f"{self.defects} defect(s) in {self.sample_reviewed} sampled images: the verifier "
                "should not be trusted on this set; review every image by hand"
            )
        if self.more:
            return (
                f"{self.defects} defect(s) found: draw {self.more} more image(s) into the sample "
                f"({self.needed} in all) to reach {self.max_defect_rate:.1%}"
            )
        steps = []
        if self.sample_pending:
            steps.append(f"review the {self.sample_pending} remaining sample image(s)")
        if self.by_hand_pending:
            steps.append(f"review the {self.by_hand_pending} image(s) the verifier did not pass")
        if steps:
            return "; ".join(steps)
        if self.unsampled_pending:
            return (
                f"accept the {self.unsampled_pending} unsampled verifier-passed image(s) "
                "as certified by the sample"
            )
        return "certified"

    def statement(self) -> str:
        """Return the sentence a paper or a dataset card can print (see `certified` first)."""
        return (
            f"{self.images} images, {self.reviewed_by_hand} reviewed by hand, "
            f"{self.certified_images} accepted by the verifier and certified by sample "
            f"{self.sample_id}: defect rate among the {self.accepted} accepted images "
            f"≤ {self.bound:.2%} at {self.confidence:.0%} confidence (exact binomial bound; "
            f"{self.defects} defect(s) in a random sample of {self.sample_reviewed} of the "
            f"{self.passed} verifier-passed images)."
        )

    def as_json(self) -> dict[str, Any]:
        """Return the assessment as JSON (for the app and scripts)."""
        record = {
            name: getattr(self, name)
            for name in self.__dataclass_fields__  # type: ignore[attr-defined]
        }
        record |= {
            "sample_pending": self.sample_pending,
            "more": self.more,
            "trusted": self.trusted,
            "reached": self.reached,
            "ready": self.ready,
            "certified": self.certified,
            "next_step": self.next_step(),
            "statement": self.statement(),
        }
        return record


def assess(
    sample: Sample,
    state: SetState,
    max_defect_rate: float | None = None,
    confidence: float | None = None,
) -> Assessment:
    """Return where a certified review stands (the target defaults to the sample's)."""
    rate = sample.max_defect_rate if max_defect_rate is None else max_defect_rate
    level = sample.confidence if confidence is None else confidence
    check_target(rate, level)
    in_order = set(sample.order)
    current = state.verdicts
    statuses = [state.status(image) for image in sample.drawn]
    reviewed = sum(status in DECIDED for status in statuses)
    defects = statuses.count("rejected")
    outside = [image for image in current if image not in in_order]
    unsampled = [image for image in sample.unsampled if current.get(image) == "pass"]
    low, high = (
        (lower_bound(defects, reviewed, level), upper_bound(defects, reviewed, level))
        if reviewed
        else (0.0, 1.0)
    )
    return Assessment(
        sample_id=sample.id,
        max_defect_rate=rate,
        confidence=level,
        images=len(current),
        passed=len(sample.order),
        by_hand_required=len(outside),
        by_hand_pending=sum(not state.by_hand(image) for image in outside),
        sample_size=sample.size,
        sample_reviewed=reviewed,
        defects=defects,
        bound=high,
        lower=low,
        needed=sample_size(rate, level, defects, len(sample.order)),
        unsampled=len(unsampled),
        unsampled_pending=sum(state.status(image) not in DECIDED for image in unsampled),
        certified_images=sum(state.certified.get(image) == sample.id for image in current),
        reviewed_by_hand=sum(state.by_hand(image) for image in current),
        accepted=sum(state.status(image) == "accepted" for image in current),
    )


def to_certify(sample: Sample, state: SetState) -> list[str]:
    """Return the unsampled passed images a certification would accept (nobody decided them)."""
    return [
        image
        for image in sample.unsampled
        if state.verdicts.get(image) == "pass" and state.status(image) == "unreviewed"
    ]


def passed_images(state: SetState) -> list[str]:
    """Return the set's current verifier-passed images (the population a sample is drawn from)."""
    return [image for image, verdict in state.verdicts.items() if verdict == "pass"]


def assess_set(
    out: Path, max_defect_rate: float | None = None, confidence: float | None = None
) -> Assessment | None:
    """Return the assessment of an output set's certified review (None: no sample drawn)."""
    sample = read_sample(out)
    if sample is None:
        return None
    return assess(sample, SetState.read(out), max_defect_rate, confidence)
