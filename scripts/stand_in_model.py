"""A stand-in vision model on loopback for trying predict → analyze without an API key.

It speaks the OpenAI chat-completions protocol on 127.0.0.1 and knows an
output set's answers from its manifest: each request's image is matched to
its manifest row by content hash, and the reply is right with a probability
set by the row's presentation (handwriting −20 points, a scan −15, a smaller
delivered image −10, from 70% at the reference look), decided by a hash of
the item and condition, so the same set always gets the same answers. Its
usage bills OpenAI's high-detail image tokens plus a quarter token per prompt
character, and breaks out no image tokens.

    python scripts/stand_in_model.py OUT --port 8011
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import math
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from PIL import Image

BASE_ACCURACY = 0.70
DROPS = {("font_style", "handwritten"): 0.20, ("capture", "scan"): 0.15}
SMALL_IMAGE_DROP = 0.10  # a delivered long side under 1024 px
LETTERS = "ABCDEFGHIJ"


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    """Return manifest rows by the sha256 of their image."""
    rows = {}
    for line in (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("image"):
            digest = hashlib.sha256((out / row["image"]).read_bytes()).hexdigest()
            rows[digest] = row
    return rows


def _chance(row: dict[str, Any]) -> float:
    condition = row.get("condition") or {}
    chance = BASE_ACCURACY - sum(d for (f, lvl), d in DROPS.items() if condition.get(f) == lvl)
    if int(condition.get("deliver_size") or 1024) < 1024:
        chance -= SMALL_IMAGE_DROP
    return chance


def _openai_image_tokens(data: bytes) -> int:
    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    return 85 + 170 * math.ceil(width * scale / 512) * math.ceil(height * scale / 512)


def _reply(body: dict[str, Any], rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    parts = body["messages"][0]["content"]
    text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
    images = [
        base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
        for p in parts
        if p.get("type") == "image_url"
    ]
    answer = "Answer: A"
    row = rows.get(hashlib.sha256(images[0]).hexdigest()) if images else None
    if row is not None:
        key = f"{row['item_id']}|{row['job_key']}".encode()
        draw = int.from_bytes(hashlib.sha256(key).digest()[:4], "big") / 2**32
        right = LETTERS.index(str(row["answer"])) if str(row["answer"]) in LETTERS else 0
        wrong = (right + 1) % max(len(row.get("options") or [1, 2]), 2)
        answer = f"Answer: {LETTERS[right if draw < _chance(row) else wrong]}"
    prompt = sum(_openai_image_tokens(data) for data in images) + len(text) // 4
    return {
        "id": "stand-in",
        "object": "chat.completion",
        "model": body.get("model", "stand-in"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": answer}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3},
    }  # fmt: skip


def main() -> None:
    """Serve the stand-in until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the output set whose answers the stand-in knows")
    parser.add_argument("--port", type=int, default=8011)
    args = parser.parse_args()
    rows = _rows(args.out)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *log_args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            data = json.dumps(_reply(body, rows)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(
        f"stand-in model at http://127.0.0.1:{args.port}/v1 ({len(rows)} images known)", flush=True
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
