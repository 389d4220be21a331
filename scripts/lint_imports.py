"""Run `lint-imports` (import-linter) over the `itemshot` package as it installs.

The stage folders sit at the top of the checkout and install as subpackages
of `itemshot` (setuptools `package-dir`). import-linter reads packages from
one folder tree, so this lays the installed shape out in a temporary folder
of symlinks, read from `pyproject.toml`, and runs the contracts there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    """Lay out the package tree, run lint-imports on it, and return its exit status."""
    config = ROOT / "pyproject.toml"
    mapping = tomllib.loads(config.read_text())["tool"]["setuptools"]["package-dir"]
    with tempfile.TemporaryDirectory(prefix="itemshot-lint-") as temp:
        tree = Path(temp)
        for package, folder in sorted(mapping.items(), key=lambda kv: kv[0].count(".")):
            target = tree.joinpath(*package.split("."))
            if package == "itemshot":
                target.mkdir(parents=True)
                for entry in (ROOT / folder).iterdir():
                    (target / entry.name).symlink_to(entry)
            else:
                target.symlink_to(ROOT / folder, target_is_directory=True)
        env = dict(os.environ, PYTHONPATH=str(tree))
        lint = Path(sys.executable).with_name("lint-imports")
        return subprocess.run([str(lint), str(config)], env=env, cwd=temp).returncode


if __name__ == "__main__":
    sys.exit(main())
