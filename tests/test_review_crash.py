"""`review.jsonl` survives a SIGKILL of the server in the middle of a burst of decisions.

200 decisions go to the real server from 8 concurrent clients; once 100 are
acknowledged the server is killed (no shutdown code runs) while the rest
are in flight. After a restart every acknowledged decision is in the log,
none twice; sending all 200 again (same ids, as a client retrying would)
logs only the ones that were lost, so the log ends with each exactly once.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from itemshot.factorial.review.log import REJECT_REASONS, REVIEW_LOG, read_decisions
from tests.review_sets import review_server, synthetic_set

BURST = 200
KILL_AFTER = 100
ACTIONS = ("accept", "reject", "flag")


def _decision(number: int, image: str) -> dict:
    action = ACTIONS[number % 3]
    return {
        "id": f"burst-{number:03d}",
        "position": number,
        "image": image,
        "action": action,
        "reason": list(REJECT_REASONS)[number % 9] if action == "reject" else "",
        "note": f"decision {number}",
        "seconds": 1.5,
    }


def _csrf(client: httpx.Client) -> str:
    page = client.get("/").text
    marker = 'name="csrf-token" content="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


def test_acknowledged_decisions_survive_sigkill(tmp_path: Path) -> None:
    out = tmp_path / "burst"
    rows = synthetic_set(out, BURST)
    decisions = [_decision(n, row["image"]) for n, row in enumerate(rows)]
    acknowledged: set[str] = set()
    lock = threading.Lock()
    enough = threading.Event()

    with review_server(out, "--reviewer", "alice") as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            headers = {"X-CSRF-Token": _csrf(client)}

        def send(decision: dict) -> None:
            try:
                with httpx.Client(base_url=server.url, timeout=30) as client:
                    answer = client.post("/api/decisions", json=decision, headers=headers)
            except httpx.HTTPError:
                return  # the server died under it: not acknowledged
            if answer.status_code == 200 and answer.json()["ok"]:
                with lock:
                    acknowledged.add(decision["id"])
                    if len(acknowledged) >= KILL_AFTER:
                        enough.set()

        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(send, d) for d in decisions]
            assert enough.wait(timeout=300)
            server.kill()  # SIGKILL mid-burst
            for future in futures:
                future.result()
    assert KILL_AFTER <= len(acknowledged) < BURST  # the kill really cut the burst short

    logged = [json.loads(line)["id"] for line in _complete_lines(out)]
    counts = Counter(logged)
    assert acknowledged <= set(counts)  # every acknowledged decision is on disk
    assert max(counts.values()) == 1  # none twice

    with review_server(out, "--reviewer", "alice") as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            headers = {"X-CSRF-Token": _csrf(client)}
            progress = client.get("/api/progress").json()
            assert progress["reviewed"] == len(set(logged))

            def resend(decision: dict) -> bool:
                answer = client.post("/api/decisions", json=decision, headers=headers).json()
                assert answer["ok"]
                return bool(answer["duplicate"])

            with ThreadPoolExecutor(8) as pool:  # a client retrying everything
                duplicates = sum(pool.map(resend, decisions))
        assert duplicates == len(set(logged))
    read = read_decisions(out)
    assert sorted(d.id for d in read.decisions) == sorted(d["id"] for d in decisions)
    assert (
        Counter(json.loads(line)["id"] for line in _complete_lines(out)).most_common(1)[0][1] == 1
    )
    by_id = {d.id: d for d in read.decisions}
    assert (
        by_id["burst-001"].reason == list(REJECT_REASONS)[1]
        and by_id["burst-001"].reviewer == "alice"
    )


def _complete_lines(out: Path) -> list[str]:
    """Return the log's lines that parse (a torn last line, if any, is not a decision)."""
    lines = []
    for line in (out / REVIEW_LOG).read_text(encoding="utf-8").splitlines():
        try:
            json.loads(line)
        except ValueError:
            continue
        lines.append(line)
    return lines
