"""Dataset readers: each turns a file's rows into RawItems for `build_item`."""

from __future__ import annotations

import ast
import csv
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.renderer.adapters.build import ANSWER_FORMATS, RawItem
from itemshot.renderer.items import LETTERS, ItemError

FORMATS = ("mmmu_hf", "mmmu_pro_tool", "mmmu_pro_mix", "generic")
# The columns a row of each fixed layout must have (a row without one fails by that name).
REQUIRED_COLUMNS = {
    "mmmu_pro_mix": (
        "question",
        "shuffled_options",
        "shuffled_options_answer",
        "options",
        "answer",
    ),
    "mmmu_pro_tool": ("question", "options", "answer"),
    "mmmu_hf": ("question", "options", "answer"),
}
MAX_IMAGE_COLUMNS = 7


class DatasetError(ValueError):
    """A dataset that cannot be read at all (as opposed to one bad item)."""


@dataclass(frozen=True)
class ColumnMapping:
    """Which columns of a generic dataset hold which item fields.

    `options` names one column holding a list (or a stringified list);
    `option_columns` names one column per option instead (e.g. A, B, C, D).
    `answer_format` is auto, letter, index0, index1 or text: under auto a
    letter is a letter, a number (JSON or parquet, not CSV text) a 0-based
    index and other text an option's text (see `build._parse_answer`).
    """

    question: str = "question"
    options: str | None = "options"
    option_columns: tuple[str, ...] = ()
    answer: str = "answer"
    answer_format: str = "auto"
    images: tuple[str, ...] = tuple(f"image_{n}" for n in range(1, MAX_IMAGE_COLUMNS + 1))
    id: str | None = "id"
    subject: str | None = "subject"
    language: str | None = "language"
    extra: Mapping[str, str] = field(default_factory=dict)
    # The columns named on purpose (`--map`), field → columns: each must exist in the file.
    named: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Refuse an unknown answer format before any row is read."""
        if self.answer_format not in ANSWER_FORMATS:
            raise DatasetError(
                f"answer_format {self.answer_format!r} is not one of {', '.join(ANSWER_FORMATS)}"
            )

    @classmethod
    def from_pairs(cls, pairs: Mapping[str, str]) -> ColumnMapping:
        """Return a mapping from `field=column` pairs (`options=A,B,C,D` means option columns)."""
        known = {"question", "options", "answer", "answer_format", "images", "id", "subject"}
        known |= {"language"}
        unknown = set(pairs) - known
        if unknown:
            raise DatasetError(
                f"unknown mapping field(s) {sorted(unknown)}; known: {sorted(known)}"
            )
        values: dict[str, Any] = {}
        for key, value in pairs.items():
            if key == "options" and "," in value:
                values["option_columns"] = tuple(v.strip() for v in value.split(","))
                values["options"] = None
            elif key == "images":
                values["images"] = tuple(v.strip() for v in value.split(",") if v.strip())
            else:
                values[key] = value
        values["named"] = {
            key: tuple(v.strip() for v in value.split(",") if v.strip())
            for key, value in pairs.items()
            if key != "answer_format"
        }
        return cls(**values)

    def missing_columns(self, columns: set[str]) -> list[tuple[str, str]]:
        """Return the (field, column) pairs named on purpose that are not among `columns`."""
        return [
            (name, column)
            for name, wanted in self.named.items()
            for column in wanted
            if column not in columns
        ]


def detect_format(path: Path) -> str:
    """Return the adapter name that fits the file, by extension and first row's columns."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        with _parquet_errors(path):
            columns = set(pq.read_schema(path).names)
        return "mmmu_hf" if {"question", "options", "answer", "image_1"} <= columns else "generic"
    if suffix in (".jsonl", ".json"):
        return detect_rows_format(_json_rows(path, FORMAT_SAMPLE))
    if suffix in (".csv", ".tsv"):
        return "generic"
    raise DatasetError(f"cannot tell the format of {path.name!r}; pass --format")


FORMAT_SAMPLE = 50  # rows read to tell a JSON dataset's layout


def detect_row_format(row: Mapping[str, Any]) -> str:
    """Return the adapter name that fits one JSON-like row, judged by its fields."""
    if {"shuffled_options", "shuffled_options_answer", "options"} <= set(row):
        return "mmmu_pro_mix"
    if "question" in row and isinstance(row.get("options"), list):
        return "mmmu_pro_tool"
    return "generic"


def detect_rows_format(rows: Iterable[Mapping[str, Any]]) -> str:
    """Return the adapter name most of the readable rows fit (the first FORMAT_SAMPLE of them).

    One row lacking a field, wherever it stands, does not decide the layout
    of the whole file: it fails on its own under the layout the others share.
    Ties go to the more specific layout (mix, then tool, then generic).
    """
    votes: Counter[str] = Counter()
    for row in rows:
        if "__error__" in row:
            continue
        votes[detect_row_format(row)] += 1
        if sum(votes.values()) >= FORMAT_SAMPLE:
            break
    if not votes:
        return "generic"
    order = ("mmmu_pro_mix", "mmmu_pro_tool", "generic")
    return max(order, key=lambda name: (votes[name], -order.index(name)))


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the rows of a JSONL, CSV/TSV or parquet file as dicts.

    Text files must be UTF-8 (a byte-order mark, as Excel writes, is fine); a
    file in another encoding is refused as a whole with the line and byte of
    the first character that is not UTF-8, rather than losing lines.
    """
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        for number, line in utf8_lines(path):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                yield {"__error__": f"line {number} is not JSON ({error.msg})"}
                continue
            except (ValueError, RecursionError) as error:  # a 5,000-digit number, deep nesting
                yield {"__error__": f"line {number} cannot be read ({type(error).__name__})"}
                continue
            yield row if isinstance(row, dict) else {"__error__": f"line {number}: not an object"}
    elif suffix in (".csv", ".tsv"):
        for _ in utf8_lines(path):  # the whole file is checked before any row is used
            pass
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t" if suffix == ".tsv" else ",")
            try:
                yield from reader
            except csv.Error as error:
                raise DatasetError(f"{path.name}, line {reader.line_num}: {error}") from None
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        with _parquet_errors(path):
            table = pq.read_table(path)
        for batch in table.to_batches(max_chunksize=256):
            yield from batch.to_pylist()
    else:
        raise DatasetError(f"unsupported file type {suffix!r}")


_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def utf8_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) of a UTF-8 file, a leading byte-order mark dropped.

    Raises DatasetError naming the line and byte of the first undecodable
    byte (UTF-8 never uses the newline byte inside a character, so decoding
    line by line is exact).
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                if raw.startswith(_UTF16_BOMS):
                    raise DatasetError(
                        f"{path.name} is UTF-16 text; save it as UTF-8 (e.g. Excel: CSV UTF-8)"
                    )
                raw = raw.removeprefix(_BOM)
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DatasetError(_not_utf8(path, number, raw, error)) from None


def _not_utf8(path: Path, number: int, raw: bytes, error: UnicodeDecodeError) -> str:
    byte = raw[error.start]
    hint = ""
    try:
        raw.decode("cp1252")
        hint = " (it looks like Latin-1 / Windows-1252)"
    except UnicodeDecodeError:
        pass
    return (
        f"{path.name} is not UTF-8 text{hint}: line {number}, byte {error.start + 1} "
        f"is 0x{byte:02X}; save the file as UTF-8 and run again"
    )


@contextmanager
def _parquet_errors(path: Path) -> Iterator[None]:
    """Turn pyarrow's errors for an empty or broken file into a DatasetError naming it."""
    import pyarrow as pa

    try:
        yield
    except (pa.ArrowException, OSError) as error:
        raise DatasetError(f"{path.name} is not a readable parquet file ({error})") from None


def _json_rows(path: Path, count: int) -> list[dict[str, Any]]:
    """Return up to `count` readable rows of a JSON file, from its start."""
    rows: list[dict[str, Any]] = []
    for row in read_rows(path):
        if "__error__" not in row:
            rows.append(row)
            if len(rows) >= count:
                break
    return rows


def parse_option_list(value: Any) -> Any:
    """Return a real list from a list or a stringified Python/JSON list; else the value as is."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            return list(ast.literal_eval(value))
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            return value
    return list(value) if isinstance(value, tuple) else value


def _image_value(value: Any) -> str | bytes | None:
    """Return a path or bytes from a path string or an HF `{bytes, path}` struct."""
    if isinstance(value, Mapping):
        if value.get("bytes"):
            return bytes(value["bytes"])
        return value.get("path") or None
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _images(row: Mapping[str, Any], columns: tuple[str, ...]) -> dict[int, str | bytes | None]:
    found: dict[int, str | bytes | None] = {}
    for position, column in enumerate(columns, start=1):
        if column in row:
            # `image_3` is figure 3 whatever its place in the list of columns.
            tail = column.rsplit("_", 1)[-1]
            number = int(tail) if tail.isdigit() else position
            found[number] = _image_value(row[column])
    return found


def to_raw_item(fmt: str, row: Mapping[str, Any], line: int, mapping: ColumnMapping) -> RawItem:
    """Return the RawItem for one row of a dataset in format `fmt` (line numbers from 1)."""
    for column in REQUIRED_COLUMNS.get(fmt, ()):
        if column not in row:
            raise ItemError(str(row.get("id") or line), column, "the row has no such column")
    if fmt == "mmmu_pro_mix":
        return RawItem(
            id=str(row.get("id") or line),
            question=row.get("question"),
            options=parse_option_list(row.get("shuffled_options")),
            answer=row.get("shuffled_options_answer"),
            options_4=parse_option_list(row.get("options")),
            answer_4=row.get("answer"),
            images=_images(row, mapping.images),
            subject=str(row.get("subfield") or ""),
            meta={k: row[k] for k in ("font", "fontSize", "background", "category") if k in row},
        )
    if fmt in ("mmmu_hf", "mmmu_pro_tool"):
        return RawItem(
            id=str(row.get("id") or line),
            question=row.get("question"),
            options=parse_option_list(row.get("options")),
            answer=row.get("answer"),
            images=_images(row, mapping.images),
            subject=str(row.get("subject") or row.get("subfield") or ""),
        )
    if fmt == "generic":
        return _generic_raw_item(row, line, mapping)
    raise DatasetError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")


def _generic_raw_item(row: Mapping[str, Any], line: int, mapping: ColumnMapping) -> RawItem:
    item_id = str(row.get(mapping.id) or line) if mapping.id else str(line)
    if mapping.option_columns:
        options: Any = _column_options(item_id, row, mapping.option_columns)
    else:
        options = parse_option_list(row.get(mapping.options or "options"))
    return RawItem(
        id=item_id,
        question=row.get(mapping.question),
        options=options,
        answer=row.get(mapping.answer),
        answer_format=mapping.answer_format,
        images=_images(row, mapping.images),
        subject=str(row.get(mapping.subject) or "") if mapping.subject else "",
        language=str(row.get(mapping.language) or "") if mapping.language else "",
    )


def _column_options(item_id: str, row: Mapping[str, Any], columns: tuple[str, ...]) -> list[Any]:
    """Return the options of one-column-per-option data; a gap before a later option is refused.

    Trailing empty columns are fine (an item with fewer options than the
    dataset has columns). An empty column before a filled one is not: closing
    the gap would shift every later option to another letter and the answer
    key would point at a different option.
    """
    values = [row.get(column) for column in columns]
    while values and _blank(values[-1]):
        values.pop()
    for position, value in enumerate(values):
        if _blank(value):
            later = next(
                c
                for c, v in zip(columns[position + 1 :], values[position + 1 :], strict=False)
                if not _blank(v)
            )
            raise ItemError(
                item_id,
                "options",
                f"option {LETTERS[position]} (column {columns[position]!r}) is empty but column "
                f"{later!r} after it is not; filling the gap would move later options to other "
                "letters and change the answer key",
            )
    return values


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def letters_for(count: int) -> str:
    """Return the option letters for `count` options."""
    return LETTERS[:count]
