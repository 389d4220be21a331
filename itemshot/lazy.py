"""Lazy public names for a package: each imported from its module on first use.

The stage packages keep a small public surface in their `__init__`, but
importing one of their light modules (a constant, a record) must not load
OpenCV, SciPy, tesseract or google-genai with it; `itemshot --help` stays fast.
This is the bottom layer: any package may use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """Return a module `__getattr__` that imports each name in `exports` from its module."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            return getattr(import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
