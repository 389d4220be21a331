"""`itemshot capture`: apply a capture preset to one clean render and its layout sidecar."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemshot.renderer.output import atomic_write
from itemshot.renderer.presentation import CAPTURES, SEVERITIES
from itemshot.renderer.records import Layout

if TYPE_CHECKING:
    from itemshot.degradations import Captured

PRESETS = tuple(name for name in CAPTURES if name != "none")


def write_captured(captured: Captured, layout: Layout, image_path: Path) -> Path:
    """Write the captured image and a `<stem>.json` sidecar (layout + capture params); return it."""
    sidecar = image_path.with_suffix(".json")
    record = {"layout": layout.as_dict(), "capture": captured.params}
    atomic_write(image_path, captured.image)
    atomic_write(sidecar, json.dumps(record, indent=1).encode("utf-8"))
    return sidecar


def register(subparsers: Any) -> None:
    """Add the `capture` subcommand."""
    parser = subparsers.add_parser(
        "capture",
        help="simulate a screenshot, phone photo or scan of one clean render",
        description="Apply a capture preset to a clean render. The layout sidecar's regions are "
        "mapped into the captured image and written, with every sampled parameter, to "
        "OUT's .json sidecar.",
    )
    parser.add_argument("image", type=Path, help="clean render (PNG)")
    parser.add_argument("--layout", type=Path, required=True,
                        help="sidecar JSON holding {'layout': …} (as the renderer writes)")  # fmt: skip
    parser.add_argument("--preset", choices=PRESETS, required=True)
    parser.add_argument("--severity", choices=SEVERITIES, default="medium")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deliver-size", type=int, default=None,
                        help="long side in px as the model receives it (default: the render's)")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True, help="captured image path")
    parser.set_defaults(handler=cmd_capture)


def cmd_capture(args: argparse.Namespace) -> int:
    """Run `itemshot capture`."""
    from itemshot.degradations import capture_layout

    try:
        record = json.loads(args.layout.read_text(encoding="utf-8"))
        layout = Layout.from_dict(record.get("layout", record))
        data = args.image.read_bytes()
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"itemshot capture: cannot read input: {error}")
        return 2
    try:
        captured, moved = capture_layout(
            data, layout, args.preset, args.severity, args.seed, args.deliver_size
        )
    except ValueError as error:
        print(f"itemshot capture: {error}")
        return 2
    out = args.out
    if out.suffix.lower() not in (".jpg", ".jpeg", ".png") or (
        (out.suffix.lower() == ".png") != (captured.format == "png")
    ):
        out = out.with_suffix(captured.suffix)
        print(f"note: the preset encoded {captured.format}; writing {out}")
    sidecar = write_captured(captured, moved, out)
    print(f"{out} ({captured.width}x{captured.height} {captured.format}); record: {sidecar}")
    return 0
