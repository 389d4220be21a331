"""A regular (non-editable) install: one top-level package, and it renders the demo.

The wheel is built from the checkout and installed into a fresh venv. Its
dependencies come from a wheelhouse cached outside the checkout (filled from
the package index on first use), so a re-run installs offline.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE_DATA, run_cli

pytestmark = pytest.mark.slow
CACHE = Path(os.environ.get("ITEMSHOT_TEST_CACHE", Path.home() / ".cache" / "itemshot-test"))


def _run(*command: str | Path, cwd: Path | str = "/", check: bool = True) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=1800
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{command} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return the `bin` folder of a fresh venv with the checkout's wheel installed."""
    temp = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "build", "--wheel", "--outdir", temp / "dist", ROOT, cwd=temp)
    [wheel] = (temp / "dist").glob("itemshot-*.whl")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    digest = hashlib.sha256("\n".join(project["dependencies"]).encode()).hexdigest()[:16]
    wheelhouse = CACHE / f"wheelhouse-{digest}"
    if not wheelhouse.is_dir():
        filling = wheelhouse.with_name(wheelhouse.name + ".partial")
        shutil.rmtree(filling, ignore_errors=True)
        _run(sys.executable, "-m", "pip", "download", "-q", "-d", filling, wheel, cwd=temp)
        filling.rename(wheelhouse)
    _run(sys.executable, "-m", "venv", temp / "venv", cwd=temp)
    pip = temp / "venv" / "bin" / "pip"
    _run(pip, "install", "-q", "--no-index", "--find-links", wheelhouse, wheel, cwd=temp)
    return temp / "venv" / "bin"


def test_only_itemshot_is_installed_at_top_level(venv: Path) -> None:
    assert "ok" in _run(venv / "python", "-c", "import itemshot, itemshot.renderer; print('ok')")
    for stage in ("renderer", "verify", "templates", "fonts", "factorial"):
        failed = _run(venv / "python", "-c", f"import {stage}", check=False)
        assert "ModuleNotFoundError" in failed
    listing = _run(venv / "pip", "show", "-f", "itemshot").split("Files:", 1)[1]
    files = [line.strip() for line in listing.splitlines() if line.strip()]
    tops = {f.split("/", 1)[0] for f in files if not f.startswith("..")}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"itemshot"}
    # The page script ships: without it every render dies in the browser.
    assert "itemshot/templates/static/page.js" in files


def test_the_wheel_renders_the_demo_byte_for_byte(venv: Path, tmp_path: Path) -> None:
    out = tmp_path / "wheel-demo"
    _run(venv / "itemshot", "demo", "--out", out)
    images = sorted((out / "images").glob("*.png"))
    assert len(images) == len(SAMPLE_DATA.read_text(encoding="utf-8").splitlines())
    assert (out / "contact_sheet.png").is_file() and (out / "audit.html").is_file()
    # The same demo from the checkout's own install gives the same bytes.
    here = tmp_path / "checkout-demo"
    assert run_cli("demo", "--out", here, "--no-verify") == 0
    for image in images:
        assert image.read_bytes() == (here / "images" / image.name).read_bytes(), image.name
