"""Request building for the generative backend: the Presentation in words, the item as data.

The prompt comes from a versioned Jinja template (`templates/nanobanana/`);
the item's text is passed verbatim (Japanese stays Japanese) between markers
that the item text cannot forge, and its figures go in as image parts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import jinja2

from itemshot.renderer.items import LETTERS, Item
from itemshot.renderer.presentation import Presentation
from itemshot.renderer.seeds import canonical_json

TEMPLATE_VERSION = "v1"
MODES = ("generate", "restyle")
ADJUSTMENTS = ("stress_text", "larger_font", "keep_figure", "plainer_background")

SCENE_WORDS = {
    "exam_sheet": "a printed exam sheet lying on a desk",
    "workbook": "a page of a printed school workbook",
    "whiteboard": "a classroom whiteboard written with markers",
    "blackboard": "a classroom blackboard written with chalk",
    "projector": "a lecture slide projected on a screen in a classroom",
    "tablet_notebook": "a note-taking app on a tablet",
    "webpage": "a quiz page in a web browser",
    "game_console": "a quiz screen of a video game on a handheld game console",
    "tv_quiz": "a TV quiz show screen with on-screen captions",
    "plain": "plain text straight on a flat background",
}
COLOR_WORDS = {
    "white": "white",
    "light_green": "light green",
    "light_yellow": "light yellow",
    "light_pink": "light pink",
    "light_gray": "light grey",
    "light_blue": "light blue",
    "board_green": "dark green (chalkboard)",
    "board_black": "near black (chalkboard)",
    "board_blue": "dark blue (chalkboard)",
}
FONT_WORDS = {
    "regular": "a clean regular sans-serif typeface",
    "bold": "a bold sans-serif typeface",
    "thin": "a thin, light-weight sans-serif typeface",
    "handwritten": "neat, legible handwriting",
    "comic": "a casual comic-style typeface",
    "serif": "a classic serif typeface, as in a textbook",
    "mono": "a monospaced typewriter-like typeface",
}
MARGIN_WORDS = {
    "small": "small margins; the content fills most of the image",
    "large": "large empty margins around the content",
}
CAPTURE_WORDS = {
    "none": "a clean digital image, straight on, no capture artefacts",
    "pc_screenshot": "a screenshot taken on a desktop computer",
    "phone_screenshot": "a screenshot taken on a smartphone, with the phone's status bar",
    "phone_photo_paper": "a photo of the paper taken with a smartphone, slightly angled, "
    "natural indoor light",
    "phone_photo_screen": "a photo of the screen taken with a smartphone, slightly angled, "
    "with faint screen texture",
    "scan": "a flatbed scan of the printed page",
}
_MARKER = re.compile(r"<<<|>>>")


@dataclass(frozen=True)
class ImagePart:
    """One image sent with the prompt (a figure, or the exact render in hybrid mode)."""

    mime: str
    data: bytes
    label: str

    @property
    def sha256(self) -> str:
        """Return the hash of the bytes (what a request key records)."""
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class GenRequest:
    """Everything sent for one image: model, prompt, image parts and image config."""

    model: str
    prompt: str
    images: tuple[ImagePart, ...]
    aspect_ratio: str
    image_size: str
    seed: int
    template_version: str = TEMPLATE_VERSION

    def key(self) -> str:
        """Return the hash of the full request (the response cache key; holds no secret)."""
        return hashlib.sha256(canonical_json(self.describe()).encode("utf-8")).hexdigest()

    def describe(self) -> dict[str, object]:
        """Return the request as a JSON-ready record (image parts by hash)."""
        return {
            "model": self.model,
            "prompt": self.prompt,
            "images": [{"mime": p.mime, "sha256": p.sha256, "label": p.label} for p in self.images],
            "aspect_ratio": self.aspect_ratio,
            "image_size": self.image_size,
            "seed": self.seed,
            "template_version": self.template_version,
        }


def image_size(presentation: Presentation) -> str:
    """Return the model's image size (1K, 2K, 4K) for the presentation's long side."""
    if presentation.resolution <= 1024:
        return "1K"
    return "2K" if presentation.resolution <= 2048 else "4K"


def _data(text: str) -> str:
    """Return item text safe to put between markers (it cannot close or open one)."""
    return _MARKER.sub(lambda m: m.group(0)[0] * 2 + " " + m.group(0)[0], text)


@cache
def _template(version: str) -> jinja2.Template:
    source = (
        resources.files("itemshot.templates") / "nanobanana" / f"prompt_{version}.txt"
    ).read_text(encoding="utf-8")
    env = jinja2.Environment(
        autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return env.from_string(source)


def _aspect_words(aspect: str) -> str:
    a, b = (int(x) for x in aspect.split(":"))
    shape = "portrait" if a < b else "landscape" if a > b else "square"
    return f"{aspect} ({shape})"


def prompt_text(
    item: Item,
    presentation: Presentation,
    mode: str = "generate",
    adjustments: tuple[str, ...] = (),
    version: str = TEMPLATE_VERSION,
) -> str:
    """Return the prompt for an item in a presentation (mode `generate` or `restyle`)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    unknown = set(adjustments) - set(ADJUSTMENTS)
    if unknown:
        raise ValueError(f"unknown prompt adjustments: {sorted(unknown)}")
    figures = sorted(item.figures)
    p = presentation
    color = COLOR_WORDS.get(p.color, f"the colour {p.color}")
    text = _template(version).render(
        mode=mode,
        scene=SCENE_WORDS[p.scene],
        color=color,
        font=FONT_WORDS[p.font_style],
        font_size=p.font_size,
        font_size_large=max(p.font_size + 8, round(p.font_size * 1.4)),
        long_side=1024,
        margin=MARGIN_WORDS[p.margin],
        capture=CAPTURE_WORDS[p.capture],
        aspect=_aspect_words(p.aspect),
        letters=", ".join(f"({x})" for x in LETTERS[: len(item.options)]),
        japanese=item.language == "ja",
        figures=", ".join(f"figure {n}" for n in figures),
        adjustments=tuple(adjustments),
        question=_data(item.question),
        options=[(LETTERS[i], _data(o)) for i, o in enumerate(item.options)],
    )
    return text.strip() + "\n"


def build_request(
    item: Item,
    presentation: Presentation,
    *,
    model: str,
    seed: int,
    mode: str = "generate",
    adjustments: tuple[str, ...] = (),
    base_png: bytes | None = None,
) -> GenRequest:
    """Return the request for one attempt: prompt, figures (or the exact render), image config."""
    if mode == "restyle":
        if base_png is None:
            raise ValueError("restyle mode needs the exact render")
        images: tuple[ImagePart, ...] = (ImagePart("image/png", base_png, "exact render"),)
    else:
        images = tuple(
            ImagePart(item.figures[n].mime, item.figures[n].data, f"figure {n}")
            for n in sorted(item.figures)
        )
    return GenRequest(
        model=model,
        prompt=prompt_text(item, presentation, mode, adjustments),
        images=images,
        aspect_ratio=presentation.aspect,
        image_size=image_size(presentation),
        seed=seed,
    )
