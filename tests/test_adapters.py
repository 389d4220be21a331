"""Dataset adapters on real fixtures and on files in each supported layout."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from itemshot.renderer.adapters import ColumnMapping, DatasetError, load_dataset
from itemshot.renderer.items import Item


def png_bytes(colour: str = "red", size: tuple[int, int] = (40, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_tool_fixture_loads_every_item(tool_data: Path) -> None:
    dataset = load_dataset(tool_data)
    assert dataset.format == "mmmu_pro_tool"
    assert len(dataset.items) == 21 and not dataset.errors
    first = dataset.items[0]
    assert first.id == "1" and first.answer_letter == "A" and 1 in first.figures
    assert first.figures[1].width > 0


def test_mix_fixture_keeps_both_option_sets(mix_data: Path) -> None:
    dataset = load_dataset(mix_data, missing_images="placeholder", limit=50)
    assert dataset.format == "mmmu_pro_mix"
    item = dataset.items[0]
    assert item.options_4 is not None and item.answer_4 is not None
    # The correct answer is the same text in both sets.
    assert item.options[item.answer] == item.options_4[item.answer_4]
    assert item.missing_figures == (1,)


def test_mix_fixture_without_placeholder_fails_missing_figures(mix_data: Path) -> None:
    dataset = load_dataset(mix_data, limit=20)
    assert not dataset.items
    assert all(e.field.startswith("image_") and "not found" in e.message for e in dataset.errors)


def test_hf_parquet_layout(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": ["validation_Art_1"],
            "question": ["Which colour is shown in <image 1>?"],
            "options": [str(["red", "green", "blue", "black"])],
            "answer": ["A"],
            "image_1": [{"bytes": png_bytes(), "path": "a.png"}],
            "image_2": [None],
            "subject": ["Art"],
        }
    )
    path = tmp_path / "validation.parquet"
    pq.write_table(table, path)
    dataset = load_dataset(path)
    assert dataset.format == "mmmu_hf"
    (item,) = dataset.items
    assert item.options == ("red", "green", "blue", "black")
    assert item.figures[1].mime == "image/png" and item.subject == "Art"


def test_generic_csv_with_option_columns_and_index_answers(tmp_path: Path) -> None:
    (tmp_path / "fig.png").write_bytes(png_bytes("blue"))
    path = tmp_path / "items.csv"
    path.write_text(
        "uid,prompt,A,B,C,label,pic\n"
        "q1,What is shown in <image 1>?,a square,a circle,a star,1,fig.png\n"
        "q2,Two plus two?,three,four,,1,\n",
        encoding="utf-8",
    )
    mapping = ColumnMapping.from_pairs(
        {
            "id": "uid",
            "question": "prompt",
            "options": "A,B,C",
            "answer": "label",
            "answer_format": "index0",
            "images": "pic",
        }
    )
    dataset = load_dataset(path, mapping=mapping)
    assert [i.id for i in dataset.items] == ["q1", "q2"]
    assert dataset.items[0].answer_letter == "B" and 1 in dataset.items[0].figures
    assert dataset.items[1].options == ("three", "four")


def test_generic_jsonl_answer_as_text_and_language_detection(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    row = {
        "id": "j1",
        "question": "日本の首都はどこか。",
        "options": ["大阪", "東京"],
        "answer": "東京",
    }
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    (item,) = load_dataset(path, format="generic").items
    assert isinstance(item, Item) and item.answer == 1 and item.language == "ja"


def test_unknown_mapping_field_is_a_clear_error() -> None:
    with pytest.raises(DatasetError, match="unknown mapping field"):
        ColumnMapping.from_pairs({"questoin": "q"})


def test_missing_dataset_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_dataset(tmp_path / "nope.jsonl")
