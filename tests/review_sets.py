"""Helpers for the review app's tests: synthetic output sets and a real server process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCENES = ("exam_sheet", "whiteboard", "webpage", "blackboard")
BACKENDS = ("chromium", "nanobanana")
CAPTURES = ("none", "phone_photo_paper", "scan")
SUBJECTS = ("Geography", "Physics", "History")


def tiny_png(shade: int = 200, size: tuple[int, int] = (96, 128)) -> bytes:
    """Return a small solid-colour PNG (a stand-in image a browser can decode)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, (shade, shade, 255 - shade)).save(buffer, "PNG")
    return buffer.getvalue()


def synthetic_row(index: int, **fields: Any) -> dict[str, Any]:
    """Return a manifest row shaped like the pipeline's, verdict failing on every third image."""
    failed = index % 3 == 0
    item_id = f"item-{index:05d}"
    stem = f"images/{item_id}-{index:012x}"
    reasons = (
        [
            {"code": "text_mismatch", "region": "question", "detail": "accuracy 0.62"},
            {"code": "number_missing", "region": "option:B", "detail": "4,500"},
        ]
        if failed
        else []
    )
    row = {
        "item_id": item_id,
        "job_key": f"{index:064x}",
        "seed": index,
        "condition": {},
        "content": {"figures": "show", "options": True},
        "question": f"Question {index}: which value is the largest?",
        "options": ["4,500", "4,600", "4,700", "4,800"],
        "answer": "D",
        "n_options": 4,
        "subject": SUBJECTS[index % len(SUBJECTS)],
        "language": "en",
        "presentation": {
            "scene": SCENES[index % len(SCENES)],
            "capture": CAPTURES[index % len(CAPTURES)],
            "font_style": "regular",
        },
        "backend": BACKENDS[1] if index % 7 == 0 else BACKENDS[0],
        "image": f"{stem}.png",
        "layout": f"{stem}.json",
        "status": "ok",
        "error": None,
        "width": 96,
        "height": 128,
        "verdict": "fail" if failed else "pass",
        "verify": {
            "passed": not failed,
            "codes": list(dict.fromkeys(r["code"] for r in reasons)),
            "reasons": reasons,
            "scores": {"question": 0.62 if failed else 1.0, "option:B": 1.0},
            "mode": "regions",
        },
    }
    row.update(fields)
    return row


def synthetic_set(
    out: Path, count: int, *, images: bool = True, rows: Mapping[int, Mapping[str, Any]] = {}
) -> list[dict[str, Any]]:
    """Write an output set of `count` synthetic images (manifest, sidecars, PNGs); return its rows.

    `rows` overrides fields of chosen rows (e.g. item text with markup).
    """
    (out / "images").mkdir(parents=True, exist_ok=True)
    made = [synthetic_row(i, **dict(rows.get(i, {}))) for i in range(count)]
    png = tiny_png() if images else b""
    with (out / "manifest.jsonl").open("w", encoding="utf-8") as handle:
        for row in made:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            if images:
                (out / row["image"]).write_bytes(png)
                layout = {
                    "width": 96,
                    "height": 128,
                    "regions": [
                        {
                            "name": "question",
                            "kind": "question",
                            "quad": [[4, 4], [92, 4], [92, 40], [4, 40]],
                        },
                        {
                            "name": "option:B",
                            "kind": "option",
                            "quad": [[4, 50], [92, 50], [92, 70], [4, 70]],
                        },
                    ],
                }
                (out / row["layout"]).write_text(
                    json.dumps({"job_key": row["job_key"], "layout": layout})
                )
    return made


@dataclass
class ReviewServer:
    """A running `itemshot review` process and the address it printed."""

    url: str
    process: subprocess.Popen[str]

    def kill(self) -> None:
        """SIGKILL the server (no shutdown code runs) and reap it."""
        self.process.kill()
        self.process.wait(timeout=30)

    def stop(self) -> int:
        """Stop the server the way Ctrl-C would (graceful shutdown); return its exit status."""
        self.process.terminate()
        return self.process.wait(timeout=60)


@contextmanager
def review_server(
    out: Path, *args: str, env: Mapping[str, str] | None = None, log: Path | None = None
) -> Iterator[ReviewServer]:
    """Start `itemshot review OUT --port 0 ARGS` on 127.0.0.1; yield it once it prints its URL."""
    log = log or out.parent / f"{out.name}-server.log"
    environment = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", **(env or {})}
    with log.open("a") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "itemshot.cli", "review", str(out), "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=environment,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()  # blocks until the server is ready (or dies)
            if not line.startswith("itemshot review: "):
                process.wait(timeout=30)
                raise RuntimeError(f"the review server did not start: {log.read_text()[-2000:]}")
            server = ReviewServer(line.split(": ", 1)[1].strip(), process)
            yield server
        finally:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=60)
            if process.stdout is not None:
                process.stdout.close()
