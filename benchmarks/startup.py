"""How fast the command line answers: `itemshot --help`, and a render's first finished job.

    .venv/bin/python benchmarks/startup.py [--repeats 7]

Prints the median and worst wall time of `itemshot --help`, the same for
`python -c pass` (the interpreter's own floor, measured in the same run), and
the time from starting `itemshot render` on the 21-item fixture until its
first job is reported finished (`--events`), which bounds when the first job
started. Targets: `--help` under 0.5 s; the first job within 1.5 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "mmmu-pro" / "tool" / "data.jsonl"
ITEMSHOT = Path(sys.executable).with_name("itemshot")


def wall(command: list[str]) -> float:
    """Return the wall time of one run of `command` (output discarded)."""
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def first_event(out: Path) -> tuple[float, float]:
    """Return (seconds to the first finished-job line, seconds for the whole render)."""
    command = [str(ITEMSHOT), "render", str(FIXTURE), "--out", str(out), "--scene", "plain"]
    command += ["--no-verify", "--no-progress", "--events"]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    first = None
    for line in process.stdout:
        if first is None and line.startswith("{"):
            first = time.perf_counter() - started
    process.wait()
    total = time.perf_counter() - started
    return (first if first is not None else float("nan")), total


def main() -> None:
    """Measure and print the start-up figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    floor = [wall([sys.executable, "-c", "pass"]) for _ in range(args.repeats)]
    helps = [wall([str(ITEMSHOT), "--help"]) for _ in range(args.repeats)]
    print(f"python -c pass : median {statistics.median(floor):.3f} s, max {max(floor):.3f} s")
    print(
        f"itemshot --help: median {statistics.median(helps):.3f} s, max {max(helps):.3f} s "
        f"(target < 0.5 s; {statistics.median(helps) / statistics.median(floor):.1f}x the floor)"
    )
    firsts, totals = [], []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as temp:
            first, total = first_event(Path(temp) / "out")
        firsts.append(first)
        totals.append(total)
    print(
        f"render, 21 items: first job finished after median {statistics.median(firsts):.2f} s "
        f"(max {max(firsts):.2f} s; target: started within 1.5 s), "
        f"whole run {statistics.median(totals):.2f} s"
    )


if __name__ == "__main__":
    main()
