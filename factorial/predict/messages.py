"""Build the model request (text and images) for one sweep row, by format."""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from itemshot.factorial.answers.prompts import PromptSet, options_text, standard_text
from itemshot.factorial.design.sweep import SweepRow


@dataclass(frozen=True)
class ImagePart:
    """One image sent to the model: its bytes, MIME type and content hash."""

    data: bytes
    mime: str
    sha256: str


@dataclass(frozen=True)
class ModelRequest:
    """What one call sends: a text part followed by images, in order."""

    text: str
    images: tuple[ImagePart, ...]


def load_image(path: Path) -> ImagePart:
    """Return an image file as an ImagePart."""
    data = path.read_bytes()
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return ImagePart(data, mime, hashlib.sha256(data).hexdigest())


def build_request(row: SweepRow, prompts: PromptSet) -> ModelRequest:
    """Return the request for a row: vision formats send the image, standard the text."""
    figures = tuple(load_image(path) for path in row.figures)
    if row.format == "blind":
        return ModelRequest(standard_text(row.question, row.options, prompts), ())
    if row.format == "standard":
        return ModelRequest(standard_text(row.question, row.options, prompts), figures)
    if row.image is None:
        raise ValueError(f"item {row.item_id!r}, field 'image': format {row.format!r} needs one")
    image = load_image(row.image)
    if row.format == "vision_question_only":
        return ModelRequest(options_text(row.options, prompts), (image,))
    if row.format == "vision_text_only":
        return ModelRequest(prompts.vision, (image, *figures))
    return ModelRequest(prompts.vision, (image,))


def build_transcription_request(row: SweepRow, prompts: PromptSet) -> ModelRequest:
    """Return the transcription request of an image-format row: the instruction and its image.

    Separate figures (vision_text_only) are not sent: the probe reads the
    text in the image, and figures are outside what it transcribes.
    """
    if row.image is None:
        raise ValueError(f"item {row.item_id!r}, field 'image': nothing to transcribe")
    return ModelRequest(prompts.vision, (load_image(row.image),))
