"""Build the HTML page for one item in one presentation (Jinja, autoescape on)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from itemshot.backgrounds.scene_textures import mean_color
from itemshot.backgrounds.texture_names import texture_file
from itemshot.fonts.catalogue import FontChoice
from itemshot.fonts.coverage import resolve_fonts
from itemshot.fonts.metrics import REFERENCE_STYLE, face_x_height, matched_size
from itemshot.renderer.assets import katex_available
from itemshot.renderer.direction import RTL, item_direction, text_direction
from itemshot.renderer.items import LETTERS, Figure, Item
from itemshot.renderer.jobs import Content
from itemshot.renderer.markup import (
    FigureRef,
    Math,
    Segment,
    Text,
    blocked_commands,
    is_only_figures,
    paragraphs,
    parse_inline,
)
from itemshot.renderer.measures import MIN_X_HEIGHT_PX
from itemshot.renderer.presentation import FONT_STYLES, Presentation
from itemshot.renderer.scene_words import SCENE_WORDS

# Scene furniture in the item's language, so a Japanese page is Japanese throughout.
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "figure": "Figure {n}",
        "missing": "Figure {n} (image not available)",
        "exam_title": "PRACTICE EXAMINATION",
        "name": "Name",
        "question": "Question",
        "points": "points",
        "page": "Page",
        "site": "StudyHub",
        "nav_courses": "Courses",
        "nav_practice": "Practice",
        "nav_help": "Help",
        "crumbs": "Practice tests",
        "submit": "Submit answer",
        "show": "QUIZ TIME",
        "ticker": "Choose the correct answer before the time runs out!",
    },
    "ja": {
        "figure": "図{n}",
        "missing": "図{n}（画像なし）",
        "exam_title": "模擬試験",
        "name": "氏名",
        "question": "問題",
        "points": "点",
        "page": "ページ",
        "site": "まなびナビ",
        "nav_courses": "コース",
        "nav_practice": "練習",
        "nav_help": "ヘルプ",
        "crumbs": "練習問題",
        "submit": "回答する",
        "show": "クイズタイム",
        "ticker": "制限時間内に正しい答えを選んでください！",
    },
}

# Longest option (in characters) that still sits well in a two-column grid.
TWO_COLUMN_MAX_CHARS = 38
LINE_HEIGHT = 1.35  # line pitch, in multiples of the nominal size (the reference face's)


@dataclass(frozen=True)
class PageDocument:
    """A ready-to-load page: its HTML, the figure bytes it may fetch, and what was chosen."""

    html: str
    assets: dict[str, tuple[bytes, str]]
    css_width: int
    css_height: int
    device_scale: float
    min_scale: float
    fonts: FontChoice
    decor: dict[str, Any]
    placeholders: tuple[int, ...]
    # (region, command) of every blocked LaTeX command the item's formulas use.
    math_blocked: tuple[tuple[str, str], ...] = ()
    # The CSS px the item's text is set at (before fitting): the nominal size
    # for the reference face, the x-height-matched size for any other.
    font_px: float = 0.0
    # Every font style of the catalogue as the page's fit sets the item's text in
    # it (see `fit_faces`): the page scale is the one at which all of them fit.
    fit_faces: tuple[dict[str, Any], ...] = ()


def _environment() -> jinja2.Environment:
    loader = jinja2.FileSystemLoader(str(resources.files("itemshot.templates")))
    return jinja2.Environment(
        loader=loader,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
    )


_ENV = _environment()


def shell_html() -> str:
    """Return the long-lived document a page slot shows all its jobs in (see chromium.py)."""
    return _ENV.get_template("shell.html").render(math=katex_available())


def words_for(language: str) -> dict[str, str]:
    """Return the scene words for a language (English when there is no translation)."""
    base = WORDS.get(language, WORDS["en"])
    return {**base, **SCENE_WORDS.get(language, SCENE_WORDS["en"])}


def build_page(
    item: Item,
    presentation: Presentation,
    seed: int,
    content: Content | None = None,
    decor_seed: int | None = None,
) -> PageDocument:
    """Return the page for `item` drawn with `presentation`.

    `decor_seed` (default: `seed`) picks the scene decorations (question
    number, points, page, variant): a design passes one seeded by the item, so
    every cell of an item carries the same furniture. `seed` names the job's
    own figure URLs.
    """
    content = content or Content()
    words = words_for(item.language)
    rng = random.Random(seed if decor_seed is None else decor_seed)
    decor = {
        "number": rng.randint(1, 30),
        "points": rng.choice([2, 4, 5, 6, 10]),
        "page": rng.randint(1, 6),
        "total": 30,
        "timer": rng.randint(5, 20),
    }
    # Drawn after the older fields so their values stay what they were.
    decor["variant"] = rng.randint(0, 2)
    decor["ruling"] = rng.choice(["ruled", "grid"])
    decor["unit"] = rng.randint(1, 12)
    figures_seen: set[int] = set()
    assets: dict[str, tuple[bytes, str]] = {}

    def figure_view(number: int, *, in_option: str = "") -> dict[str, Any]:
        region = (
            f"figure:{number}" if number not in figures_seen else f"figure:{number}:{in_option}"
        )
        figures_seen.add(number)
        figure: Figure | None = item.figures.get(number)
        caption = words["figure"].format(n=number)
        if figure is None or content.figures == "placeholder":
            # A blank box of the figure's own size (or a labelled default box when the
            # dataset lacks the file), so the layout matches the figure-bearing image.
            return {
                "number": number,
                "region": region,
                "placeholder": True,
                "placeholder_text": words["missing"].format(n=number) if figure is None else "",
                "caption": caption,
                "width": 360 if figure is None else _display_width(figure, in_option),
                "ratio": 1.5 if figure is None else round(figure.width / figure.height, 4),
            }
        # A URL of this job's own: Chromium caches decoded images by URL, at the
        # size they were last drawn, and a reused page would otherwise draw the
        # figure from an earlier job's decode (pixels would depend on job order).
        url = f"/job/{seed:x}/fig-{figure.sha256[:20]}"
        assets[url] = (figure.data, figure.mime)
        width = _display_width(figure, in_option)
        return {
            "number": number,
            "region": region,
            "placeholder": False,
            "url": url,
            "caption": caption,
            "natural_width": figure.width,
            "natural_height": figure.height,
            "width": width,
            "ratio": round(figure.width / figure.height, 4),
        }

    blocks = _question_blocks(item, words, figure_view)
    if content.figures == "omit":
        blocks = [b for b in blocks if b["kind"] == "text"]
    options, grid = _option_views(item, words, figure_view)
    if not content.options:
        options, grid = [], False
    has_math = any(
        isinstance(s, Math)
        for block in blocks
        if block["kind"] == "text"
        for p in block["paragraphs"]
        for s in p
    ) or any(o["has_math"] for o in options)
    text = _rendered_text(blocks, options, words)
    fonts = resolve_fonts(presentation.font_style, item.language, text, presentation.font_face)
    # The reference face sets the scene furniture, and its x-height at the
    # nominal size is the one every face's text is given.
    reference = resolve_fonts(REFERENCE_STYLE, item.language, text)
    font_px = matched_size(presentation.font_size, fonts.faces[0], reference.faces[0])
    furniture = resolve_fonts(REFERENCE_STYLE, item.language, _furniture_text(words, decor))
    color = presentation.css_color()
    texture = ""
    if presentation.texture != "none":
        texture = texture_file(presentation.texture)
        color = mean_color(presentation.texture)
    width, height = presentation.css_size()
    direction = item_direction(item.language, [s for p in paragraphs(item.question) for s in p])
    page = {
        "lang": item.language,
        "scene": presentation.scene,
        "css_width": width,
        "css_height": height,
        "orientation": "landscape" if width > height else "portrait",
        "font_stack": Markup(fonts.css_stack()),  # catalogue names only, never item text
        "avoided_stack": Markup(fonts.avoided_css_stack()),  # the same; empty when none
        "font_weight": fonts.weight,
        "font_size": _css_number(font_px),
        "reference_size": presentation.font_size,
        "furniture_stack": Markup(furniture.css_stack()),  # catalogue names only
        # The same line pitch in px for every face: a face set larger to match the
        # x-height keeps the reference's lines, not taller ones.
        "line_height": _line_height(presentation.font_size, font_px),
        "math_scale": _ratio(presentation.font_size, font_px),
        "margin": presentation.margin,
        "color": Markup(color),  # validated enum or #rrggbb
        "texture": texture,  # a served texture file name or empty
        "blocks": [_segment_views(b, words, direction, fonts.avoided) for b in blocks],
        "options": [
            {
                **o,
                "segments": _views(o["segments"], words, fonts.avoided),
                "dir": _dir(text_direction(o["segments"], direction), direction),
            }
            for o in options
        ],
        "options_dir": _dir(direction, direction),
        "option_columns": _option_columns(options, grid, width),
        "option_grid": grid,
        "math": has_math,
        "words": words,
        "decor": decor,
    }
    html = _ENV.get_template(f"{presentation.scene}/page.html").render(page=page)
    return PageDocument(
        html=html,
        assets=assets,
        css_width=width,
        css_height=height,
        device_scale=presentation.device_scale,
        min_scale=_min_scale(presentation, reference),
        fonts=fonts,
        decor=decor,
        placeholders=tuple(sorted(n for n in item.missing_figures if n in figures_seen)),
        math_blocked=_blocked_math(blocks, options),
        font_px=font_px,
        fit_faces=fit_faces(item.language, text, presentation.font_size, reference),
    )


def _min_scale(presentation: Presentation, reference: FontChoice) -> float:
    """Return the share of the requested size under which text would fall below the floor."""
    x_height = (
        presentation.font_size * presentation.device_scale * face_x_height(reference.faces[0])
    )
    return min(1.0, MIN_X_HEIGHT_PX / x_height)


def fit_faces(
    language: str, text: str, nominal_px: int, reference: FontChoice
) -> tuple[dict[str, Any], ...]:
    """Return the item's text in every font style, as the page's fit sets it (see page.js).

    Each entry is a style's CSS font stack (catalogue names only), weight,
    x-height-matched size, and the line height and formula scale that keep
    the nominal line pitch and formula size.
    """
    faces = []
    for style in FONT_STYLES:
        fonts = resolve_fonts(style, language, text)
        size = matched_size(nominal_px, fonts.faces[0], reference.faces[0])
        faces.append(
            {
                "family": fonts.css_stack(),
                "weight": fonts.weight,
                "size": size,
                "line": float(_line_height(nominal_px, size)),
                "math": float(_ratio(nominal_px, size)),
            }
        )
    return tuple(faces)


def _line_height(nominal_px: int, font_px: float) -> str:
    """Return the unitless line height that gives text at `font_px` the nominal line pitch."""
    if font_px == nominal_px:
        return str(LINE_HEIGHT)
    return f"{LINE_HEIGHT * nominal_px / font_px:.4f}"


def _ratio(nominal_px: int, font_px: float) -> str:
    """Return nominal / matched size as a CSS number (`1` for the reference face)."""
    return "1" if font_px == nominal_px else f"{nominal_px / font_px:.4f}"


def _css_number(value: float) -> str:
    """Return a px value for CSS: whole numbers as such (`22`), others to 1/100 (`24.52`)."""
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def _furniture_text(words: dict[str, str], decor: dict[str, Any]) -> str:
    """Return every character the scene furniture may show (words and decoration numbers)."""
    return "".join(words.values()) + "".join(str(v) for v in decor.values()) + "0123456789/›()"


def _blocked_math(
    blocks: list[dict[str, Any]], options: list[dict[str, Any]]
) -> tuple[tuple[str, str], ...]:
    """Return (region, command) for each blocked LaTeX command shown on the page."""
    found: list[tuple[str, str]] = []
    spans = [
        (block["region"], segments)
        for block in blocks
        if block["kind"] == "text"
        for segments in block["paragraphs"]
    ]
    spans += [(f"option:{option['letter']}", option["segments"]) for option in options]
    for region, segments in spans:
        for segment in segments:
            if isinstance(segment, Math):
                found += [(region, command) for command in blocked_commands(segment.latex)]
    return tuple(found)


def _rendered_text(
    blocks: list[dict[str, Any]], options: list[dict[str, Any]], words: dict[str, str]
) -> str:
    """Return every character the item's text spans will show (for the coverage check)."""
    parts: list[str] = []
    for block in blocks:
        if block["kind"] == "text":
            for paragraph in block["paragraphs"]:
                parts += [s.text for s in paragraph if isinstance(s, Text)]
                parts += [
                    words["figure"].format(n=s.number)
                    for s in paragraph
                    if isinstance(s, FigureRef)
                ]
        else:
            parts += [f["caption"] + f.get("placeholder_text", "") for f in block["figures"]]
    for option in options:
        parts.append(option["label"])
        parts += [s.text for s in option["segments"] if isinstance(s, Text)]
        parts += [f.get("placeholder_text", "") for f in option["figures"]]
    return "".join(parts)


def _display_width(figure: Figure, in_option: str) -> int:
    """Return the CSS width a figure asks for: small ones enlarged, large ones capped."""
    return min(max(figure.width, 160 if in_option else 320), 900)


def _question_blocks(item: Item, words: dict[str, str], figure_view: Any) -> list[dict[str, Any]]:
    """Return text blocks and figure blocks; a figure follows the paragraph that first cites it."""
    option_only = set()
    question_refs = {
        s.number for p in paragraphs(item.question) for s in p if isinstance(s, FigureRef)
    }
    for option in item.options:
        option_only |= {s.number for s in parse_inline(option) if isinstance(s, FigureRef)}
    option_only -= question_refs
    blocks: list[dict[str, Any]] = []
    placed: set[int] = set()
    text_block: list[list[Segment]] = []
    for paragraph in paragraphs(item.question):
        text_block.append(paragraph)
        new = [s.number for s in paragraph if isinstance(s, FigureRef) and s.number not in placed]
        new = list(dict.fromkeys(new))
        if new:
            blocks.append({"kind": "text", "paragraphs": text_block})
            blocks.append({"kind": "figures", "figures": [figure_view(n) for n in new]})
            placed.update(new)
            text_block = []
    if text_block:
        blocks.append({"kind": "text", "paragraphs": text_block})
    count = 0
    for block in blocks:
        if block["kind"] == "text":
            count += 1
            block["region"] = "question" if count == 1 else f"question:{count}"
    return blocks


def _option_views(
    item: Item, words: dict[str, str], figure_view: Any
) -> tuple[list[dict[str, Any]], bool]:
    views = []
    all_figures = True
    for letter, text in zip(LETTERS, item.options, strict=False):
        segments = parse_inline(text)
        only_figures = is_only_figures(segments)
        all_figures = all_figures and only_figures
        numbers = list(dict.fromkeys(s.number for s in segments if isinstance(s, FigureRef)))
        kept = [s for s in segments if not isinstance(s, FigureRef)] if only_figures else segments
        views.append(
            {
                "letter": letter,
                "label": f"({letter})",
                "segments": kept,
                "figures": [figure_view(n, in_option=letter) for n in numbers]
                if only_figures
                else [],
                "has_math": any(isinstance(s, Math) for s in segments),
                "chars": len(text),
            }
        )
    return views, all_figures


def _option_columns(options: list[dict[str, Any]], grid: bool, width: int) -> int:
    if grid:
        return 4 if len(options) > 4 and width > 800 else 2
    if not options:
        return 1
    if len(options) >= 4 and max(o["chars"] for o in options) <= TWO_COLUMN_MAX_CHARS:
        return 2
    return 1


def _views(segments: list[Segment], words: dict[str, str], avoided: str) -> list[dict[str, Any]]:
    views: list[dict[str, Any]] = []
    for segment in segments:
        if isinstance(segment, Text):
            views += _text_views(segment.text, avoided)
        elif isinstance(segment, Math):
            views.append({"kind": "math", "latex": segment.latex, "display": segment.display})
        else:
            views.append({"kind": "ref", "caption": words["figure"].format(n=segment.number)})
    return views


def _text_views(text: str, avoided: str) -> list[dict[str, Any]]:
    """Return the spans of a literal text: runs of `avoided` characters apart (`glyph`).

    Those characters are drawn as another character by the face that would set
    them (a backslash as "₩"); their own spans are set in the faces that draw
    them as themselves (see `FontChoice.avoided`).
    """
    if not avoided or not any(char in avoided for char in text):
        return [{"kind": "text", "text": text, "glyph": False}]
    runs = re.split(f"([{re.escape(avoided)}]+)", text)
    return [{"kind": "text", "text": run, "glyph": run[0] in avoided} for run in runs if run]


def _segment_views(
    block: dict[str, Any], words: dict[str, str], direction: str, avoided: str
) -> dict[str, Any]:
    if block["kind"] != "text":
        return block
    return {
        **block,
        "paragraphs": [_views(p, words, avoided) for p in block["paragraphs"]],
        "dir": _dir(direction, direction),
        "paragraph_dirs": [
            _dir(text_direction(p, direction), direction) for p in block["paragraphs"]
        ],
    }


def _dir(text: str, item: str) -> str:
    """Return the `dir` attribute of a text block: its direction, or "" to leave it out.

    Left out for left-to-right text in a left-to-right item, where it would be
    the inherited direction anyway, so those pages stay byte for byte what
    they were; given explicitly (either value) everywhere else.
    """
    return text if RTL in (text, item) else ""
