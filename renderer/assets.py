"""The static files a rendering page may load, and nothing else."""

from __future__ import annotations

import contextlib
import mimetypes
import os
import re
from functools import cache
from importlib import resources
from pathlib import Path

from itemshot.backgrounds.scene_textures import encode_texture
from itemshot.backgrounds.texture_names import CACHE_VERSION, texture_stem
from itemshot.renderer.output import atomic_write

# Debian's libjs-katex puts KaTeX here; override for other systems.
KATEX_DIR = Path(os.environ.get("ITEMSHOT_KATEX_DIR", "/usr/share/javascript/katex"))
ORIGIN = "http://itemshot.invalid"
_TEXTURE_FILE = re.compile(r"[a-z]+-[0-9]\.(?:png|jpg)")


class AssetNotAllowed(LookupError):
    """The page asked for a URL that is not one of its job's assets."""


def _templates_dir() -> Path:
    return Path(str(resources.files("itemshot.templates")))


@cache
def static_asset(path: str) -> tuple[bytes, str]:
    """Return (bytes, mime type) of a shared static asset at URL path `path`.

    Only three folders are served: KaTeX, our page script and styles, and
    scene stylesheets. Anything else, or a path that climbs out, is refused.
    """
    if path.startswith("/static/katex/"):
        base, rest = KATEX_DIR, path.removeprefix("/static/katex/")
    elif path.startswith("/static/itemshot/"):
        base, rest = _templates_dir() / "static", path.removeprefix("/static/itemshot/")
    elif path.startswith("/static/scenes/") and path.endswith(".css"):
        scene = path.removeprefix("/static/scenes/").removesuffix(".css")
        base, rest = _templates_dir() / scene, "style.css"
    elif path.startswith("/static/textures/"):
        return _texture(path.removeprefix("/static/textures/"), path)
    else:
        raise AssetNotAllowed(path)
    # A lexical check: Debian links KaTeX's fonts folder elsewhere, so resolving
    # symlinks would wrongly refuse them; `..` and absolute parts are refused.
    parts = Path(rest).parts
    if not parts or ".." in parts or Path(rest).is_absolute():
        raise AssetNotAllowed(path)
    target = base.joinpath(*parts)
    if not target.is_file():
        raise AssetNotAllowed(path)
    mime = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if target.suffix == ".woff2":
        mime = "font/woff2"
    return target.read_bytes(), mime


def _texture(name: str, path: str) -> tuple[bytes, str]:
    """Return a generated scene texture; only names like `chalk-1.png` are accepted."""
    if not _TEXTURE_FILE.fullmatch(name):
        raise AssetNotAllowed(path)
    try:
        stem = texture_stem(name)
    except ValueError:
        raise AssetNotAllowed(path) from None
    return texture_bytes(stem, name)


def texture_cache_dir() -> Path:
    """Return the folder generated tiles are kept in between runs (ITEMSHOT_CACHE overrides)."""
    root = os.environ.get("ITEMSHOT_CACHE") or os.environ.get("XDG_CACHE_HOME")
    base = Path(root) if root else Path.home() / ".cache"
    return base / "itemshot" / f"textures-v{CACHE_VERSION}"


@cache
def texture_bytes(stem: str, file_name: str) -> tuple[bytes, str]:
    """Return (encoded bytes, mime type) of a texture tile (cached in memory and on disk)."""
    mime = "image/png" if file_name.endswith(".png") else "image/jpeg"
    stored = texture_cache_dir() / file_name
    if stored.is_file():
        return stored.read_bytes(), mime
    data, mime = encode_texture(stem)
    with contextlib.suppress(OSError):  # an unwritable cache only costs time
        atomic_write(stored, data)
    return data, mime


def katex_available() -> bool:
    """Return whether the KaTeX files are installed."""
    return (KATEX_DIR / "katex.min.js").is_file()
