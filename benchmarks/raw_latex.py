"""Raw LaTeX: render every MMMU-Pro mix item once and count pages that show LaTeX as source.

1. Surveys how the items write math — the 1,730 mix rows' question, options
   and shuffled options, and the tool fixture's items — by the renderer's own
   parser: formulas per form (`$…$`, `$…$` with a space inside, `$$…$$`,
   `\\[…\\]`, `\\(…\\)`, undelimited commands), escaped dollars `\\$`, and
   literal dollar amounts left as text.
2. Renders every loadable mix item once with the real Chromium pipeline
   (figures as placeholders: the mix file ships without its images; scene and
   font style chosen per item by the job seed), and counts the pages the
   page check (page.js, rawLatex) failed as `raw_latex`, by what it found and
   by the forms the failing field holds. A page that shows raw LaTeX is a
   render failure, never an image: the pages rendered `ok` show none.

    .venv/bin/python benchmarks/raw_latex.py                    # all items, 2 browsers
    .venv/bin/python benchmarks/raw_latex.py --limit 200 --out /tmp/raw

`--out` keeps the renders (a second run with the same seed only re-reads them).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.items import LETTERS, Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.markup import FORMS, Math, Text, parse_inline
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import PresentationSpec
from itemshot.renderer.tex_commands import known_commands

ROOT = Path(__file__).resolve().parents[1]
MIX = ROOT / "tests" / "data" / "mmmu-pro" / "mix" / "mix_data.jsonl"
TOOL = ROOT / "tests" / "data" / "mmmu-pro" / "tool" / "data.jsonl"
AMOUNT = re.compile(r"\$\s?\d")
ESCAPED_DOLLAR = "\\$"
# The cross-check of pages rendered ok, on their recorded region text (a second,
# simpler reading than the page's own check): delimiters, KaTeX commands, braced
# scripts, and a dollar that opens TeX.
_DELIMITER = re.compile(r"\$\$|\\[()[\]]|\$(?=[\\^_{])|[\^_]\{")
_COMMAND = re.compile(r"\\([A-Za-z]+)")


def raw_latex_in(text: str) -> list[str]:
    """Return the LaTeX source tokens a reader would see in `text` (a region's text)."""
    found = [m.group(0) for m in _DELIMITER.finditer(text)]
    found += [f"\\{m.group(1)}" for m in _COMMAND.finditer(text) if m.group(1) in known_commands()]
    return found


def _row_texts(row: dict) -> Iterable[str]:
    """Yield a raw row's question, options and shuffled options (lists or their repr)."""
    yield str(row.get("question") or "")
    for key in ("options", "shuffled_options"):
        value = row.get(key) or []
        if isinstance(value, str):
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                value = [value]
        yield from (str(option) for option in value)


def survey(path: Path) -> tuple[int, Counter[str], Counter[str]]:
    """Return (rows, occurrences per form, rows per form) over a JSONL file's texts."""
    occurrences: Counter[str] = Counter()
    rows_with: Counter[str] = Counter()
    rows = 0
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            rows += 1
            seen: set[str] = set()
            for text in _row_texts(json.loads(line)):
                for name in _forms_in(text):
                    occurrences[name] += 1
                    seen.add(name)
            rows_with.update(seen)
    return rows, occurrences, rows_with


def _forms_in(text: str) -> list[str]:
    """Return one entry per formula (by form), escaped dollar and dollar amount in `text`."""
    found = [s.form for s in parse_inline(text) if isinstance(s, Math)]
    found += ["escaped dollar \\$"] * text.count(ESCAPED_DOLLAR)
    for segment in parse_inline(text):
        if isinstance(segment, Text):
            found += ["dollar amount (text)"] * len(AMOUNT.findall(segment.text))
    return found


def _field_text(item: Item, field: str) -> str:
    if field.startswith("option:"):
        return item.options[LETTERS.index(field.split(":", 1)[1])]
    return item.question


def _print_survey(label: str, path: Path) -> None:
    rows, occurrences, rows_with = survey(path)
    print(f"{label}: {rows} rows (question + options + shuffled options)")
    for name in (*FORMS, "escaped dollar \\$", "dollar amount (text)"):
        print(f"  {name:22s} {occurrences[name]:6d} occurrences in {rows_with[name]:5d} rows")


def main() -> None:
    """Survey the forms, render every mix item once, and print the raw-LaTeX figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=MIX)
    parser.add_argument("--out", type=Path, default=None, help="keep the renders here")
    parser.add_argument("--workers", type=int, default=2, help="browser processes")
    parser.add_argument("--pages", type=int, default=2, help="pages per browser")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()

    _print_survey("mix", args.data)
    if TOOL.is_file():
        _print_survey("tool fixture", TOOL)

    dataset = load_dataset(args.data, missing_images="placeholder", limit=args.limit)
    items = {item.id: item for item in dataset.items}
    print(f"\nloaded {len(items)} items; {len(dataset.errors)} rows refused at load:")
    for error in dataset.errors:
        print(f"  {error}")
    spec = PresentationSpec(scene="random", font_style="random")
    requests = [JobRequest(item, spec) for item in items.values()]
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch) / "renders"
        started = time.perf_counter()
        summary = run_jobs(
            plan(requests, args.seed),
            out,
            RunSettings(workers=args.workers, pages_per_worker=args.pages),
        )
        seconds = time.perf_counter() - started
        rows = read_jsonl(out / "manifest.jsonl")
        showing = []
        for row in rows:
            if row["status"] == "ok":
                layout = json.loads((out / row["layout"]).read_text(encoding="utf-8"))["layout"]
                tokens = [t for region in layout["regions"] for t in raw_latex_in(region["text"])]
                if tokens:
                    showing.append(row["item_id"])
                    print(f"  rendered ok but shows raw LaTeX: {row['item_id']} {tokens[:5]}")
    print(
        f"rendered {summary.rendered} (skipped {summary.skipped}) of {len(rows)} pages in "
        f"{seconds:.0f} s ({len(rows) / max(seconds, 1e-9):.1f} pages/s, {args.workers} browsers "
        f"× {args.pages} pages); failures by reason: {dict(summary.failures)}"
    )
    raw = [r for r in rows if r["status"] != "ok" and r["error"]["reason"] == "raw_latex"]
    found: Counter[str] = Counter()
    forms: Counter[str] = Counter()
    for row in raw:
        message = row["error"]["message"]
        match = re.search(r": (delimiter|command) (\S+) in ", message)
        found[f"{match.group(1)} {match.group(2)}" if match else "?"] += 1
        text = _field_text(items[row["item_id"]], row["error"]["field"])
        forms.update(set(_forms_in(text)) or {"no formula parsed"})
        print(f"  raw_latex {row['item_id']} [{row['error']['field']}]: {message}")
    ok = sum(1 for r in rows if r["status"] == "ok")
    print(f"\npages rendered ok that show raw LaTeX (cross-check): {len(showing)} of {ok}")
    print(f"raw_latex render failures (the page check): {len(raw)}")
    print(f"  by what the page check found: {dict(found.most_common())}")
    print(f"  by the forms in the failing field: {dict(forms.most_common())}")
    others = Counter(r["error"]["reason"] for r in rows if r["status"] != "ok")
    others.pop("raw_latex", None)
    for row in rows:
        if row["status"] != "ok" and row["error"]["reason"] != "raw_latex":
            print(f"  {row['error']['reason']} {row['item_id']}: {row['error']['message']}")
    print(f"  other render failures: {dict(others)}")


if __name__ == "__main__":
    main()
