"""Undo, bulk and certified decisions in the review log: new lines that fold, never edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from itemshot.factorial.review.log import (
    REVIEW_LOG,
    Decision,
    DecisionError,
    ReviewLog,
    ReviewState,
    read_decisions,
)
from itemshot.review.certify import (
    CERTIFIED_BASIS,
    SetState,
    assess,
    certification_of,
    draw_sample,
    to_certify,
)


def _decision(number: int, image: str, action: str = "accept", **fields: object) -> Decision:
    reason = "text_wrong" if action == "reject" else ""
    values = {"reason": reason, **fields}
    return Decision(
        id=f"d{number}", image=image, action=action, reviewer="alice", time="t", **values
    )  # type: ignore[arg-type]


def test_undo_restores_the_decision_before_it() -> None:
    state = ReviewState()
    state.add([_decision(1, "a.png"), _decision(2, "a.png", "reject")])
    assert state.review_of("a.png").status == "rejected"
    last = state.last_decision("alice")
    assert last is not None and last.id == "d2"
    state.add([_decision(3, "a.png", "undo", undoes="d2")])
    assert state.review_of("a.png").status == "accepted"
    state.add([_decision(4, "a.png", "undo", undoes="d1")])
    assert state.review_of("a.png").status == "unreviewed"
    assert state.last_decision("alice") is None
    # An undo of an unknown or already undone decision changes nothing.
    state.add(
        [_decision(5, "a.png", "undo", undoes="d1"), _decision(6, "a.png", "undo", undoes="x")]
    )
    assert state.review_of("a.png").status == "unreviewed"


def test_a_batch_is_found_whole_and_an_undo_must_name_its_target() -> None:
    state = ReviewState()
    state.add([_decision(i, f"{i}.png", batch="b") for i in range(3)])
    assert [d.id for d in state.in_batch("b")] == ["d0", "d1", "d2"]
    with pytest.raises(DecisionError, match="undoes"):
        _decision(9, "a.png", "undo")
    with pytest.raises(DecisionError, match="undoes"):
        _decision(9, "a.png", "accept", undoes="d1")


def test_a_certified_acceptance_names_its_sample() -> None:
    with pytest.raises(DecisionError, match="sample"):
        _decision(1, "a.png", basis=CERTIFIED_BASIS)
    with pytest.raises(DecisionError, match="basis"):
        _decision(1, "a.png", "reject", basis=CERTIFIED_BASIS, sample="s")
    certified = _decision(2, "b.png", basis=CERTIFIED_BASIS, sample="sample-1")
    assert Decision.from_dict(certified.as_dict()) == certified
    state = ReviewState()
    state.add([certified, _decision(3, "c.png")])
    assert certification_of(state.review_of("b.png")) == "sample-1"
    assert certification_of(state.review_of("c.png")) == ""
    assert state.review_of("b.png").as_record()["decisions"][0]["basis"] == CERTIFIED_BASIS


def test_append_many_writes_one_fsynced_line_per_decision_once(tmp_path: Path) -> None:
    log = ReviewLog(tmp_path)
    batch = [_decision(i, f"{i}.png", batch="b") for i in range(5)]
    written, new = log.append_many(batch)
    assert written == 5 and [d.id for d in new] == [d.id for d in batch]
    assert log.append_many(batch)[0] == 0  # a retried bulk action is logged once
    assert len((tmp_path / REVIEW_LOG).read_text().splitlines()) == 5
    assert [d.id for d in read_decisions(tmp_path).decisions] == [d.id for d in batch]


def test_certification_accepts_only_unsampled_unreviewed_passes() -> None:
    passed = [f"p{i:03d}.png" for i in range(300)]
    sample = draw_sample(passed, 0.02, 0.95, seed=3)
    verdicts = {image: "pass" for image in passed} | {"f.png": "fail"}
    statuses = {image: "accepted" for image in sample.drawn}
    state = SetState(verdicts, statuses)
    found = assess(sample, state)
    assert found.sample_pending == 0 and found.by_hand_pending == 1 and not found.ready
    assert "did not pass" in found.next_step()
    state = SetState(verdicts, statuses | {"f.png": "rejected"})
    found = assess(sample, state)
    assert found.ready and not found.certified
    assert sorted(to_certify(sample, state)) == sorted(sample.unsampled)
    certified = dict.fromkeys(sample.unsampled, sample.id)
    done = SetState(verdicts, state.statuses | dict.fromkeys(certified, "accepted"), certified)
    found = assess(sample, done)
    assert found.certified and found.certified_images == 300 - 149
    assert found.reviewed_by_hand == 150 and found.accepted == 300
    assert "300 accepted images ≤ 1.99% at 95% confidence" in found.statement()
