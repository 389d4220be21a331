"""The Python API, used as a notebook would: no CLI, no subprocess."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image

import itemshot
from itemshot.renderer.records import Layout
from tests.conftest import ROOT, SAMPLE_DATA

pytestmark = pytest.mark.slow


def readme_example() -> str:
    """Return the Python block of the README's API section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_api_example_renders_captures_verifies_and_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(readme_example(), "README.md", "exec"), namespace)

    run = namespace["run"]
    assert isinstance(run, itemshot.RunResult)
    items = namespace["items"]
    assert len(items) == 12 and not items.errors
    # Rendered: one image per item, all verified, in item order.
    assert run.status == itemshot.EXIT_OK or run.status == itemshot.EXIT_UNVERIFIED
    assert [row["item_id"] for row in run.rows] == [item.id for item in items]
    assert len(run.images) == 12 and all(path.is_file() for path in run.images)
    assert run.audit is not None and run.audit.total == 12
    assert all(row.get("verdict") in ("pass", "fail") for row in run.rows)
    # Captured: a real phone photo with every sampled parameter recorded.
    shot = namespace["shot"]
    assert shot.params["preset"] == "phone_photo_paper" and shot.params["steps"]
    with Image.open(__import__("io").BytesIO(shot.image)) as opened:
        assert opened.size == (shot.width, shot.height)
    # Verified from pixels against the item the photo shows.
    verdict = namespace["verdict"]
    assert verdict.item_id == items[0].id
    # Exported: a parquet with one row per image.
    export = namespace["export"]
    assert export.rows == 12 and export.left_out == 0
    assert all(path.exists() for path in export.paths)


def test_load_accepts_rows_in_memory_with_a_mapping(tmp_path: Path) -> None:
    rows = [
        {"uid": "a", "prompt": "2 + 2 = ?", "A": "3", "B": "4", "C": "5", "D": "6", "label": "B"},
        {"uid": "b", "prompt": "", "A": "x", "B": "y", "C": "z", "D": "w", "label": "A"},
    ]
    items = itemshot.load(
        rows, mapping={"id": "uid", "question": "prompt", "options": "A,B,C,D", "answer": "label"}
    )
    assert [item.id for item in items] == ["a"]
    assert items[0].options == ("3", "4", "5", "6") and items[0].answer == 1
    [error] = items.errors
    assert (error.item_id, error.field) == ("b", "question")
    assert [getattr(e, "id", getattr(e, "item_id", None)) for e in items.entries] == ["a", "b"]


def test_render_records_bad_rows_and_silent_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = SAMPLE_DATA.read_text(encoding="utf-8").splitlines()[:2]
    bad = json.loads(lines[1]) | {"answer": "Z"}
    data = tmp_path / "data.jsonl"
    shutil.copytree(SAMPLE_DATA.parent / "figures", tmp_path / "figures")
    data.write_text(lines[0] + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    items = itemshot.load(data)
    run = itemshot.render(
        items, tmp_path / "out", scene="plain", verify=False, progress=False, workers=1
    )
    assert capsys.readouterr() == ("", "")  # progress=False is silent
    assert run.status == itemshot.EXIT_SOME_FAILED
    [failed] = run.failed
    assert failed["item_id"] == bad["id"] and failed["error"]["field"] == "answer"
    ok = [row for row in run.rows if row["status"] == "ok"]
    sidecar = json.loads((run.out / ok[0]["layout"]).read_text(encoding="utf-8"))
    layout = Layout.from_dict(sidecar["layout"])
    verdict = itemshot.verify(run.images[0], [items[0]], layout=layout)
    assert verdict.passed, [r.code for r in verdict.reasons]


def test_presentation_levels_make_every_combination() -> None:
    specs = itemshot.api.presentation_specs(scene=["plain", "webpage"], aspect=["9:16", "1:1"])
    assert {(s.scene, s.aspect) for s in specs} == {
        ("plain", "9:16"),
        ("plain", "1:1"),
        ("webpage", "9:16"),
        ("webpage", "1:1"),
    }
    with pytest.raises(TypeError):
        itemshot.api.presentation_specs(colour="white")
