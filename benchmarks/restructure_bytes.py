"""Show that a code restructure leaves every output byte as it was.

`run OUT` makes one small workflow's outputs in OUT: sweeps of the shipped
2x2 and controls designs on the embedded sample (first `--limit` items) and
of the presentation ablation (first item: every scene, font style and
capture), each image verified, an export to each harness, predictions from a loopback OpenAI-compatible stand-in whose answer
is a hash of the request, and the analysis report. `compare A B` then checks
every file of two such folders byte for byte and prints what differs.

Fields that hold wall-clock measurements (`latency_s`, `seconds`, ...) are
blanked in JSON/JSONL files before comparing (they are listed in VOLATILE),
and each folder's own path is written as `<OUT>` (audit.json names its files).
Run it once before a restructure and once after, then compare.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the loopback reply is shared with the tests

from tests.chat_replies import chat_completion  # noqa: E402

ITEMSHOT = [str(Path(sys.executable).with_name("itemshot"))]
# Keys whose values measure wall-clock time, not outputs.
VOLATILE = frozenset(
    {"latency_s", "seconds", "images_per_second", "elapsed_s", "started_at", "finished_at"}
)
LETTERS = "ABCDEFGHIJ"


class StandIn:
    """A loopback chat-completions server answering a letter hashed from each request."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.loads(raw)
                # The request's content decides the answer, so it is the same on every run.
                letter = LETTERS[hashlib.sha256(raw).digest()[0] % 4]
                reply = chat_completion(body["model"], f"Answer: {letter}", 1, 1)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _itemshot(*args: str) -> None:
    """Run one itemshot command, failing loudly on an unexpected exit status."""
    done = subprocess.run([*ITEMSHOT, *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        sys.exit(f"itemshot {' '.join(args)} exited {done.returncode}:\n{done.stderr}")


def run(out: Path, limit: int) -> None:
    """Make the workflow's outputs in `out` (which must not exist yet)."""
    sweep = out / "sweep"
    _itemshot(
        "sweep", "designs/mmmu_pro_2x2.yaml", "--out", str(sweep),
        "--limit", str(limit), "--no-progress",
    )  # fmt: skip
    ablation = out / "ablation"
    _itemshot(
        "sweep", "designs/presentation_ablation.yaml", "--out", str(ablation),
        "--limit", "1", "--no-progress",
    )  # fmt: skip
    for folder in (sweep, ablation):
        _itemshot("verify", str(folder), "--no-progress", "--workers", "2")
    for target in ("hf", "lmms-eval", "vlmevalkit"):
        _itemshot("export", str(sweep), "--to", target, "--out", str(out / f"export-{target}"))
    controls = out / "controls"
    _itemshot(
        "sweep", "designs/controls.yaml", "--out", str(controls),
        "--limit", str(limit), "--no-progress",
    )  # fmt: skip
    with StandIn() as endpoint:
        for folder in (sweep, controls):
            _itemshot(
                "predict", str(folder), "--endpoint", endpoint, "--model", "standin",
                "--concurrency", "2", "--seed", "0",
            )  # fmt: skip
        _itemshot(
            "predict", str(sweep), "--endpoint", endpoint, "--model", "standin",
            "--task", "transcribe", "--seed", "0",
        )  # fmt: skip
    for parser in ("mmmu_pro", "strict"):
        _itemshot(
            "analyze", str(sweep / "predictions.jsonl"), str(controls / "predictions.jsonl"),
            "--sets", str(sweep), str(controls), "--parser", parser,
            "--transcripts", str(sweep / "transcripts.jsonl"),
            "--report", str(out / f"report-{parser}"), "--bootstrap", "200", "--seed", "0",
        )  # fmt: skip


def _blank(value: Any, keys: frozenset[str]) -> Any:
    """Return `value` with the value of every key in `keys` replaced by None."""
    if isinstance(value, dict):
        return {k: (None if k in keys else _blank(v, keys)) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank(v, keys) for v in value]
    return value


def _comparable(path: Path, root: Path, keys: frozenset[str]) -> bytes:
    """Return a file's bytes, `root` written as `<OUT>`, the fields `keys` blanked in JSON(L)."""
    data = path.read_bytes().replace(str(root.resolve()).encode(), b"<OUT>")
    if path.suffix == ".json":
        return json.dumps(_blank(json.loads(data), keys), sort_keys=True).encode()
    if path.suffix == ".jsonl":
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        return "\n".join(json.dumps(_blank(v, keys), sort_keys=True) for v in lines).encode()
    return data


def compare(before: Path, after: Path, ignore: frozenset[str] = frozenset()) -> int:
    """Print every file that differs or exists on one side only; return 1 if any.

    `ignore` names JSON keys blanked beside VOLATILE, e.g. `dataset` (the
    dataset's absolute path in `sweep.json`) when the two runs used code
    installed in two different folders.
    """
    keys = VOLATILE | ignore
    names = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    others = {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    problems = [f"only in {before}: {n}" for n in sorted(names - others)]
    problems += [f"only in {after}: {n}" for n in sorted(others - names)]
    same = 0
    for name in sorted(names & others):
        if _comparable(before / name, before, keys) == _comparable(after / name, after, keys):
            same += 1
        else:
            problems.append(f"differs: {name}")
    print(f"{same} files identical (keys blanked: {', '.join(sorted(keys))})")
    for line in problems:
        print(line)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run or compare."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    make = verbs.add_parser("run", help="make the workflow's outputs in OUT")
    make.add_argument("out", type=Path)
    make.add_argument("--limit", type=int, default=4)
    check = verbs.add_parser("compare", help="compare two output folders byte for byte")
    check.add_argument("before", type=Path)
    check.add_argument("after", type=Path)
    check.add_argument("--ignore", action="append", default=[], help="a JSON key to blank")
    args = parser.parse_args(argv)
    if args.verb == "run":
        run(args.out.resolve(), args.limit)
        return 0
    return compare(args.before, args.after, frozenset(args.ignore))


if __name__ == "__main__":
    sys.exit(main())
