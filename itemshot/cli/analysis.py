"""The `predict`, `score` and `analyze` subcommands of `itemshot`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from itemshot.factorial.answers.registry import PARSER_NAMES

API_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the predict, score and analyze subcommands to the `itemshot` parser."""
    predict = subparsers.add_parser(
        "predict",
        help="send every condition of an output set to a model",
        description="Send every condition of OUT/manifest.jsonl to a model and write "
        "OUT/predictions.jsonl (--task transcribe: every image-format condition's image with "
        "the transcription prompt, written to OUT/transcripts.jsonl). API keys are read from "
        "OPENAI_API_KEY or GEMINI_API_KEY. Exit status: 0 every row answered, 3 some rows "
        "failed (each kind of failure is named with its count; a re-run retries only them), "
        "2 unusable arguments or output set.",
    )
    predict.add_argument("out", type=Path, metavar="OUT", help="output set folder")
    predict.add_argument("--endpoint", help="base URL, e.g. http://127.0.0.1:8000/v1")
    predict.add_argument("--model", required=True, help="model name sent to the endpoint")
    predict.add_argument("--api", choices=("openai", "gemini"), default="openai")
    predict.add_argument(
        "--task",
        choices=("answer", "transcribe"),
        default="answer",
        help="answer the questions, or transcribe the images (the reading probe)",
    )
    predict.add_argument(
        "--prompt",
        help="direct (default), cot, ocr_then_answer, or a template file; "
        "--task transcribe uses the transcription prompt unless a file is given",
    )
    predict.add_argument(
        "--output",
        type=Path,
        help="where to write the records (default OUT/predictions.jsonl or OUT/transcripts.jsonl)",
    )
    predict.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    predict.add_argument("--temperature", type=float, default=0.0)
    predict.add_argument("--max-tokens", type=int, default=4096)
    predict.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="deadline of each attempt in seconds, from connecting to the answer's last byte",
    )
    predict.add_argument("--max-attempts", type=int, default=6, help="attempts per request")
    predict.add_argument("--retry-delay", type=float, default=1.0, help="first backoff, seconds")
    predict.add_argument("--cache", type=Path, help="response cache folder (OUT/.cache/predict)")
    predict.add_argument("--seed", type=int, default=0, help="seed of the backoff jitter")
    predict.set_defaults(handler=run_predict_command)

    score = subparsers.add_parser(
        "score",
        help="score a JSONL of responses",
        description="Score a JSONL with id, response, answer and options fields.",
    )
    score.add_argument("responses", type=Path, metavar="RESPONSES.jsonl")
    score.add_argument("--parser", choices=PARSER_NAMES, default="mmmu_pro")
    score.add_argument("--seed", type=int, default=0, help="seed of the mmmu_pro random fallback")
    score.add_argument("--json", action="store_true", help="print machine-readable JSON")
    score.set_defaults(handler=run_score_command)

    analyze = subparsers.add_parser(
        "analyze",
        help="analyse predictions of a sweep",
        description="Join predictions with the output set(s) and write report.md, "
        "report.html, results.json and PNG plots.",
    )
    analyze.add_argument(
        "predictions",
        type=Path,
        nargs="*",
        metavar="PREDICTIONS",
        help="predictions.jsonl files (may be left out when --transcripts are given)",
    )
    analyze.add_argument("--sets", type=Path, nargs="+", required=True, metavar="OUT")
    analyze.add_argument("--parser", choices=PARSER_NAMES, default="strict")
    analyze.add_argument("--report", type=Path, help="report folder (default OUT/report)")
    analyze.add_argument(
        "--transcripts",
        type=Path,
        nargs="+",
        default=[],
        metavar="TRANSCRIPTS",
        help="transcripts.jsonl files from `predict --task transcribe` (the reading analysis)",
    )
    analyze.add_argument(
        "--read-threshold",
        type=float,
        default=0.95,
        help="transcription accuracy at which an item counts as read (default 0.95)",
    )
    analyze.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    analyze.add_argument("--seed", type=int, default=0)
    analyze.set_defaults(handler=run_analyze_command)


def run_predict_command(args: argparse.Namespace) -> int:
    """Run `itemshot predict`."""
    import itemshot
    from itemshot.api import EXIT_OK, EXIT_SOME_FAILED

    console = Console(stderr=True)
    api_key = os.environ.get(API_KEY_VARIABLES[args.api])
    progress = Progress(
        TextColumn(args.task),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    task = progress.add_task("predict", total=None)
    try:
        with progress:
            summary = itemshot.predict(
                args.out,
                model=args.model,
                endpoint=args.endpoint,
                api=args.api,
                api_key=api_key,
                task=args.task,
                prompt=args.prompt,
                temperature=args.temperature,
                max_tokens=args.max_tokens,
                concurrency=args.concurrency,
                timeout=args.timeout,
                max_attempts=args.max_attempts,
                retry_delay=args.retry_delay,
                cache=args.cache,
                seed=args.seed,
                output=args.output,
                on_start=lambda total: progress.update(task, total=total),
                on_done=lambda: progress.advance(task),
            )
    except (FileNotFoundError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    table = Table(title=f"predict · {args.task} · {args.model}")
    columns = {
        "rows": summary.total,
        "sent": summary.sent,
        "from cache": summary.cached,
        "failed": summary.failed,
        "attempts": summary.attempts,
        "skipped rows": len(summary.skipped_rows),
    }
    if args.task == "transcribe":
        columns["text rows (no image)"] = summary.not_applicable
    for column in columns:
        table.add_column(column, justify="right")
    table.add_row(*(str(value) for value in columns.values()))
    console.print(table)
    for reason in summary.skipped_rows[:10]:
        console.print(f"[yellow]skipped[/yellow] {reason}")
    # One line per failure kind, most frequent first, with one row's message as the example.
    for kind, count in summary.failures.items():
        example = escape(summary.examples.get(kind, "")[:300])
        rows = "row" if count == 1 else "rows"
        console.print(f"[red]failed[/red] {kind}: {count} {rows} (e.g. {example})", soft_wrap=True)
    console.print(f"wrote {summary.output}")
    if summary.failed:
        console.print(
            f"{summary.failed} of {summary.total} rows failed; run the same command again to "
            "retry them (the answers received are cached and not sent again)"
        )
        return EXIT_SOME_FAILED
    return EXIT_OK


def run_score_command(args: argparse.Namespace) -> int:
    """Run `itemshot score`."""
    from itemshot.factorial.analysis.scoring import read_jsonl, score_records, summarise

    console = Console()
    try:
        records = read_jsonl(args.responses)
    except (OSError, ValueError) as error:
        Console(stderr=True).print(f"[red]error:[/red] {error}")
        return 2
    scored, errors = score_records(records, args.parser, args.seed)
    summary = summarise(args.parser, scored, errors)
    if args.json:
        sys.stdout.write(json.dumps(summary.as_dict(), indent=2) + "\n")
        return 0
    acc = summary.accuracy
    table = Table(title=f"{args.responses.name} · parser {args.parser}")
    for column in ("n", "correct", "accuracy %", "95% CI", "unparsed", "fallback", "range %"):
        table.add_column(column, justify="right")
    table.add_row(
        str(acc.n),
        str(acc.correct),
        f"{100 * acc.rate:.2f}" if acc.n else "–",
        f"{100 * acc.low:.2f}–{100 * acc.high:.2f}",
        str(summary.unparsed),
        str(summary.fallback),
        f"{100 * summary.low_bound:.2f}–{100 * summary.high_bound:.2f}",
    )
    console.print(table)
    for message in errors[:10]:
        console.print(f"[yellow]skipped[/yellow] {message}")
    return 0


def run_analyze_command(args: argparse.Namespace) -> int:
    """Run `itemshot analyze`."""
    import itemshot
    from itemshot.factorial.report.report import print_summary

    console = Console()
    report_dir = args.report or args.sets[0] / "report"
    try:
        analysis = itemshot.analyze(
            args.predictions,
            args.sets,
            parser=args.parser,
            report=report_dir,
            bootstrap=args.bootstrap,
            seed=args.seed,
            transcripts=args.transcripts,
            read_threshold=args.read_threshold,
        )
    except (FileNotFoundError, ValueError) as error:
        Console(stderr=True).print(f"[red]error:[/red] {error}")
        return 2
    print_summary(analysis.results, console)
    console.print(f"wrote {', '.join(str(path) for path in analysis.paths)}")
    return 0
