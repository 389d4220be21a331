"""The review log, its folding, the review index and the agreement statistics (no server)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from itemshot.factorial.review.log import (
    REVIEW_LOG,
    Decision,
    DecisionError,
    ReviewLog,
    ReviewState,
    apply_review,
    read_decisions,
    utc_now,
)
from itemshot.review.index import Query, ReviewIndex
from itemshot.review.stats import agreements, cohen_kappa, decision_times
from tests.review_sets import synthetic_set


def _decision(
    n: int, image: str, action: str = "accept", reviewer: str = "alice", **kw
) -> Decision:
    reason = kw.pop("reason", "text_wrong" if action == "reject" else "")
    return Decision(
        id=f"d{n}",
        image=image,
        action=action,
        reviewer=reviewer,
        time=utc_now(),
        reason=reason,
        **kw,
    )


def test_append_is_durable_idempotent_and_survives_a_torn_line(tmp_path: Path) -> None:
    log = ReviewLog(tmp_path)
    assert log.append(_decision(1, "images/a.png"))[0]
    assert not log.append(_decision(1, "images/a.png"))[0]  # the same id again: logged once
    # A crash mid-write leaves half a line; the reader skips it, the next append starts afresh.
    with (tmp_path / REVIEW_LOG).open("ab") as handle:
        handle.write(b'{"v": 1, "id": "torn", "image": "images/b.p')
    assert [d.id for d in read_decisions(tmp_path).decisions] == ["d1"]
    assert read_decisions(tmp_path).skipped == 1
    fresh = ReviewLog(tmp_path)
    assert fresh.append(_decision(2, "images/b.png", "reject"))[0]
    read = read_decisions(tmp_path)
    assert [d.id for d in read.decisions] == ["d1", "d2"]
    assert read.skipped == 1
    assert read.decisions[1].reason == "text_wrong"


def test_a_line_an_older_version_poisoned_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`Infinity`, `NaN` or `1e999` in a line cost that line only; none is ever written."""
    log = ReviewLog(tmp_path)
    assert log.append(_decision(1, "images/a.png", seconds=2.0))[0]
    old = {"v": 1, "action": "accept", "reviewer": "alice", "time": utc_now()}
    with (tmp_path / REVIEW_LOG).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({**old, "id": "inf", "image": "b.png", "seconds": float("inf")}))
        handle.write("\n" + json.dumps({**old, "id": "nan", "image": "c.png", "seconds": 1e999}))
        handle.write("\n" + json.dumps({**old, "id": "neg", "image": "d.png", "seconds": -1}))
        handle.write("\n" + "[" * 5000 + "\n")
    with caplog.at_level("WARNING"):
        assert log.append(_decision(2, "images/e.png", seconds=1.0))[0]
        read = read_decisions(tmp_path)
    assert [d.id for d in read.decisions] == ["d1", "d2"] and read.skipped == 4
    assert log.skipped == 4
    said = caplog.text
    for number in (2, 3, 4, 5):
        assert f"review.jsonl line {number} skipped" in said
    assert "Infinity" in said
    for bad in (float("nan"), float("inf"), -0.5):
        with pytest.raises(DecisionError, match="seconds"):
            _decision(3, "images/f.png", seconds=bad)
    before = (tmp_path / REVIEW_LOG).read_bytes()
    replacement = {"image": "images/new.png", "verify": {"scores": {"question": float("nan")}}}
    with pytest.raises(DecisionError, match="replacement"):
        log.append(_decision(4, "images/a.png", "regenerate", replacement=replacement))
    assert (tmp_path / REVIEW_LOG).read_bytes() == before


def test_concurrent_writers_log_each_decision_once(tmp_path: Path) -> None:
    """Two log objects (as two servers would hold) and many threads: no loss, no duplicate."""
    logs = [ReviewLog(tmp_path), ReviewLog(tmp_path)]

    def send(worker: int) -> None:
        for n in range(40):
            logs[worker % 2].append(_decision(n, f"images/{n}.png", reviewer=f"r{worker % 2}"))

    threads = [threading.Thread(target=send, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = (tmp_path / REVIEW_LOG).read_text().splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert sorted(ids) == sorted(f"d{n}" for n in range(40))


def test_bad_decisions_are_refused_with_the_field() -> None:
    with pytest.raises(DecisionError, match="reason"):
        _decision(1, "images/a.png", "reject", reason="")
    with pytest.raises(DecisionError, match="action"):
        _decision(1, "images/a.png", "delete")
    with pytest.raises(DecisionError, match="replacement"):
        _decision(1, "images/a.png", "regenerate")


def test_state_statuses_conflicts_adjudication_and_regeneration() -> None:
    state = ReviewState()
    state.add(
        [
            _decision(1, "a.png", "accept", "alice"),
            _decision(2, "a.png", "reject", "bob"),
            _decision(3, "b.png", "reject", "alice"),
            _decision(4, "b.png", "accept", "alice"),  # alice changed her mind
            _decision(5, "c.png", "flag", "alice"),
            _decision(
                6,
                "c.png",
                "regenerate",
                "alice",
                replacement={"image": "c2.png", "verdict": "pass"},
            ),
        ]
    )
    assert state.review_of("a.png").status == "conflict"
    assert state.review_of("a.png").excluded  # a rejection keeps it out until settled
    assert state.review_of("b.png").status == "accepted"
    assert state.current_image("c.png") == "c2.png"
    assert state.review_of("c2.png").status == "unreviewed"  # a new image needs a new look
    state.add([_decision(7, "a.png", "accept", "carol", adjudication=True)])
    assert state.review_of("a.png").status == "accepted"
    rows = list(
        apply_review(
            [{"image": "c.png", "status": "ok", "verdict": "fail", "layout": "c.json"}], state
        )
    )
    assert rows[0]["image"] == "c2.png" and rows[0]["verdict"] == "pass"
    assert rows[0]["previous_images"] == ["c.png"] and "layout" not in rows[0]
    assert rows[0]["review"]["status"] == "unreviewed"


def test_cohen_kappa_against_a_hand_computed_value() -> None:
    # 10 images: both accept 4, both reject 3, disagree on 3 (A accepts 2 of them).
    first = ["accept"] * 4 + ["reject"] * 3 + ["accept", "accept", "reject"]
    second = ["accept"] * 4 + ["reject"] * 3 + ["reject", "reject", "accept"]
    # p_o = 0.7; A: 6 accept / 4 reject, B: 5 / 5 → p_e = 0.6*0.5 + 0.4*0.5 = 0.5; κ = 0.4.
    assert cohen_kappa(first, second) == pytest.approx(0.4)
    assert cohen_kappa(["accept"] * 3, ["accept"] * 3) is None  # chance agreement is 1
    state = ReviewState()
    for n, (a, b) in enumerate(zip(first, second, strict=True)):
        state.add(
            [_decision(2 * n, f"{n}.png", a, "alice"), _decision(2 * n + 1, f"{n}.png", b, "bob")]
        )
    (pair,) = agreements(state)
    assert (pair.images, pair.agreed) == (10, 7)
    assert pair.kappa == pytest.approx(0.4)


def test_decision_times_per_reviewer() -> None:
    decisions = [
        _decision(n, f"{n}.png", reviewer="alice" if n < 3 else "bob", seconds=float(n + 1))
        for n in range(5)
    ]
    times = decision_times(decisions)
    assert times["alice"]["median"] == 2.0 and times["bob"]["decisions"] == 2
    assert times["everyone"]["mean"] == 3.0


def test_index_queue_order_filters_paging_and_resume(tmp_path: Path) -> None:
    rows = synthetic_set(tmp_path, 30, images=False)
    index = ReviewIndex(tmp_path)
    queue = index.matching(Query())
    failed = [i for i, r in enumerate(rows) if r["verdict"] == "fail"]
    assert list(queue[: len(failed)]) == failed  # verifier failures first, in manifest order
    assert len(index.matching(Query(scene="whiteboard"))) == sum(
        r["presentation"]["scene"] == "whiteboard" for r in rows
    )
    assert len(index.matching(Query(reason="number_missing"))) == len(failed)
    page = index.page(Query(page=2), size=8)
    assert (page.total, page.pages, page.page) == (30, 4, 2)
    assert page.entries == tuple(int(p) for p in queue[8:16])
    # Deciding the first two moves the queue on; a new index (a restart) resumes there.
    for n, position in enumerate(queue[:2]):
        index.record(_decision(n, rows[position]["image"], "reject" if n else "accept"))
    assert index.first(Query()) == queue[2]
    assert ReviewIndex(tmp_path).first(Query()) == queue[2]
    assert len(index.matching(Query(status="rejected", reviewer="alice"))) == 1
    before, after = index.neighbours(Query(status="all"), int(queue[1]))
    assert (before, after) == (int(queue[0]), int(queue[2]))


def test_index_follows_decisions_another_process_logged(tmp_path: Path) -> None:
    rows = synthetic_set(tmp_path, 6, images=False)
    index = ReviewIndex(tmp_path)
    ReviewLog(tmp_path).append(_decision(1, rows[0]["image"], "flag", "bob"))
    index.refresh()
    assert index.entry(0).status == "flagged" and index.entry(0).reviewers == ("bob",)


def test_manifest_gets_the_review_and_the_regenerated_image(tmp_path: Path) -> None:
    rows = synthetic_set(tmp_path, 4, images=False)
    index = ReviewIndex(tmp_path)
    index.record(_decision(1, rows[1]["image"], "reject", reason="figure_wrong"))
    replacement = {
        "image": "images/new.png",
        "layout": None,
        "verdict": "pass",
        "regeneration": {"attempt": 1},
    }
    index.record(_decision(2, rows[2]["image"], "regenerate", replacement=replacement))
    assert index.write_manifest()
    written = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert written[1]["review"]["status"] == "rejected"
    assert written[1]["review"]["reason"] == "figure_wrong"
    assert written[2]["image"] == "images/new.png" and written[2]["previous_images"] == [
        rows[2]["image"]
    ]
    assert written[0]["review"]["status"] == "unreviewed"
    # The index reads rows back by offset from the rewritten file.
    assert index.row(2)["image"] == "images/new.png"
    assert index.row(3)["item_id"] == rows[3]["item_id"]
    assert not ReviewIndex(tmp_path).write_manifest(force=True)  # a restart: already applied
    # A manifest replaced by another command is re-read (its rows kept, the review re-applied).
    os.replace(tmp_path / "manifest.jsonl", tmp_path / "old.jsonl")
    synthetic_set(tmp_path, 4, images=False)
    index.refresh()
    assert index.entry(2).image == "images/new.png"
