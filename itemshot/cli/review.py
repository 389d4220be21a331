"""`itemshot review OUT`: the review web app over an output set."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Console

from itemshot.api import EXIT_OK, EXIT_USAGE

TOKEN_VARIABLE = "ITEMSHOT_REVIEW_TOKEN"


def register(subparsers: Any) -> None:
    """Add the review subcommand to the `itemshot` parser."""
    review = subparsers.add_parser(
        "review",
        help="review an output set's images in a local web app",
        description="Serve a web app to review every image of an output set beside its "
        "source item: accept, reject with a reason, flag, regenerate, undo (keys a, r, f, g, u; "
        "arrows move; ? shows help). Decisions go to OUT/review.jsonl (one fsync'd line "
        "each), into the manifest, and into every export. Binds 127.0.0.1 unless --host "
        f"says otherwise; any other address needs --token (or {TOKEN_VARIABLE}).",
    )
    review.add_argument(
        "out", type=Path, metavar="OUT", help="an output folder with manifest.jsonl"
    )
    review.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    review.add_argument(
        "--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)"
    )
    review.add_argument(
        "--reviewer", default=None, help="name recorded with each decision (default: login name)"
    )
    review.add_argument(
        "--token",
        default=None,
        help=f"access token every request must present (default: {TOKEN_VARIABLE}); "
        "required off loopback",
    )
    review.set_defaults(handler=cmd_review)


def _login() -> str:
    import getpass

    try:
        return getpass.getuser() or "reviewer"
    except (KeyError, OSError):
        return "reviewer"


def cmd_review(args: argparse.Namespace) -> int:
    """Serve the review app until interrupted; return the exit status."""
    from itemshot.outputs import MANIFEST
    from itemshot.review.security import Access

    console = Console(stderr=True)
    if not (args.out / MANIFEST).is_file():
        console.print(f"[red]error:[/red] {args.out / MANIFEST} not found")
        return EXIT_USAGE
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    reviewer = (args.reviewer or _login()).strip()
    if not reviewer or len(reviewer) > 100:
        console.print("[red]error:[/red] --reviewer must be 1 to 100 characters")
        return EXIT_USAGE
    try:
        Access.for_bind(args.host, args.port, token)
    except ValueError as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    from itemshot.review.server import serve

    def ready(url: str, index: Any) -> None:
        reviewed = len(index) - int((index.statuses == 0).sum())
        # The first line on stdout is the address (scripts wait for it).
        print(f"itemshot review: {url}", flush=True)
        console.print(
            f"{len(index)} images, {reviewed} reviewed; reviewer {reviewer!r}; "
            f"decisions in {args.out / 'review.jsonl'}"
        )
        if token:
            console.print("requests need the access token (open the address with ?token=…)")

    from itemshot.renderer.output_lock import hold_output

    try:
        # The app rewrites the manifest and appends to review.jsonl: no run may write
        # into the folder meanwhile (FolderBusy, status 2, names the holder). Other
        # reviewers may: their servers share the hold (the log has its own lock).
        with hold_output(args.out, "review", create=False, shared=True):
            serve(
                args.out,
                host=args.host,
                port=args.port,
                reviewer=reviewer,
                token=token,
                on_ready=ready,
            )
    except OSError as error:
        console.print(f"[red]error:[/red] cannot listen on {args.host}:{args.port}: {error}")
        return EXIT_USAGE
    return EXIT_OK
