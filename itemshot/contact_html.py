"""HTML contact sheets: every image of an output set with its parameters, for review."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from itemshot.renderer.output import atomic_write

_FIELDS = ("scene", "color", "font_style", "font_face", "font_size", "margin", "aspect", "texture")
_STYLE = (
    "body{font:13px sans-serif;margin:16px;background:#f4f4f4}"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:12px}"
    "figure{margin:0;background:#fff;padding:8px;border:1px solid #ddd}"
    "img{width:100%;height:auto;display:block}"
    "figcaption{margin-top:6px;word-break:break-word}dl{margin:4px 0 0;display:grid;"
    "grid-template-columns:auto 1fr;gap:0 8px}dt{color:#666}dd{margin:0}"
)


def _caption(row: dict[str, Any]) -> str:
    presentation = row.get("presentation") or {}
    pairs = [(k, presentation.get(k)) for k in _FIELDS if presentation.get(k) not in (None, "")]
    pairs += [(f"condition.{k}", v) for k, v in (row.get("condition") or {}).items()]
    terms = "".join(
        f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>" for k, v in pairs
    )
    return f"<b>{html.escape(str(row.get('item_id', '?')))}</b><dl>{terms}</dl>"


def contact_html(out: Path, rows: Sequence[dict[str, Any]], target: Path) -> Path:
    """Write an HTML page showing every rendered image of `rows` (paths relative to `out`)."""
    figures = []
    for row in rows:
        if row.get("status") != "ok" or not row.get("image"):
            continue
        image = (out / str(row["image"])).resolve()
        try:
            source = image.relative_to(target.parent.resolve()).as_posix()
        except ValueError:
            source = image.as_uri()
        figures.append(
            f'<figure><a href="{html.escape(source)}"><img src="{html.escape(source)}" '
            f'loading="lazy" alt=""></a><figcaption>{_caption(row)}</figcaption></figure>'
        )
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>contact sheet</title>'
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(out.name)}: "
        f'{len(figures)} images</h1><div class="grid">{"".join(figures)}</div></body></html>'
    )
    atomic_write(target, page.encode("utf-8"))
    return target
