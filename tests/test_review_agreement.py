"""Two reviewers on one set: two servers share the log; agreement, conflicts and adjudication."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import httpx

from itemshot.factorial.review.log import ReviewState
from tests.review_sets import review_server, synthetic_set


def _client(url: str) -> tuple[httpx.Client, dict[str, str]]:
    client = httpx.Client(base_url=url, timeout=60)
    page = client.get("/").text
    marker = 'name="csrf-token" content="'
    start = page.index(marker) + len(marker)
    return client, {"X-CSRF-Token": page[start : page.index('"', start)]}


def test_two_reviewers_kappa_conflicts_and_adjudication(tmp_path: Path) -> None:
    out = tmp_path / "set"
    rows = synthetic_set(out, 10)
    # Reviewer A: accept 6, reject 4; reviewer B agrees on 8 (κ by hand: p_o 0.8,
    # p_e 0.6·0.6 + 0.4·0.4 = 0.52, κ = 0.28 / 0.48).
    first = ["accept"] * 6 + ["reject"] * 4
    second = ["accept"] * 5 + ["reject"] + ["accept"] + ["reject"] * 3
    with (
        review_server(out, "--reviewer", "alice", log=tmp_path / "a.log") as one,
        review_server(out, "--reviewer", "bob", log=tmp_path / "b.log") as two,
    ):
        for server, actions in ((one, first), (two, second)):
            client, headers = _client(server.url)
            with closing(client):
                for n, (row, action) in enumerate(zip(rows, actions, strict=True)):
                    body = {
                        "id": f"{server.url}-{n}",
                        "position": n,
                        "image": row["image"],
                        "action": action,
                        "reason": "figure_wrong" if action == "reject" else "",
                    }
                    answer = client.post("/api/decisions", json=body, headers=headers)
                    assert answer.status_code == 200, answer.text
        # Each server sees the other's decisions (one log, read under a lock).
        client, headers = _client(one.url)
        with closing(client):
            progress = client.get("/api/progress").json()
            (pair,) = progress["agreements"]
            assert pair["reviewers"] == ["alice", "bob"]
            assert (pair["images"], pair["agreed"]) == (10, 8)
            assert abs(pair["kappa"] - 0.28 / 0.48) < 1e-9
            assert progress["statuses"]["conflict"] == 2
            conflicts = client.get("/conflicts").text
            assert conflicts.count('class="button"') == 2
            assert rows[5]["item_id"] in conflicts and rows[6]["item_id"] in conflicts
            # Settling a conflict from the conflicts view records an adjudication.
            body = {
                "id": "settle-5",
                "position": 5,
                "image": rows[5]["image"],
                "action": "accept",
                "adjudication": True,
                "query": {"status": "conflict"},
            }
            answer = client.post("/api/decisions", json=body, headers=headers).json()
            assert answer["status"] == "accepted"
            assert answer["next"] == "/item/6?status=conflict&adjudicate=1"
    state = ReviewState.from_log(out)
    assert state.review_of(rows[5]["image"]).status == "accepted"
    assert state.review_of(rows[6]["image"]).excluded  # still in conflict, with a rejection
