"""Properties of the guards against hostile input, over inputs Hypothesis makes up.

- any bytes given as an image are accepted within the limits or refused with
  `ImageRejected` — never another exception;
- UTF-8 text files read back line for line, with or without a byte-order
  mark, and a file with a byte that is not UTF-8 is refused naming its line;
- one-column-per-option data keeps every option on its own letter or is refused;
- nothing a redactor returns still holds the secret.
"""

from __future__ import annotations

import io
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from itemshot.renderer.adapters.formats import DatasetError, _column_options, utf8_lines
from itemshot.renderer.imaging import ImageLimits, ImageRejected, check_image
from itemshot.renderer.items import LETTERS, ItemError
from itemshot.renderer.redact import REDACTED, Redactor

LIMITS = ImageLimits(max_bytes=64 * 1024, max_pixels=4096, max_side=128)


def _png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, "PNG")
    return buffer.getvalue()


SMALL_PNG = _png(8, 8)


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=2048),
        st.tuples(st.integers(0, len(SMALL_PNG) - 1), st.binary(min_size=1, max_size=8)).map(
            lambda cut: SMALL_PNG[: cut[0]] + cut[1] + SMALL_PNG[cut[0] + len(cut[1]) :]
        ),
    )
)
def test_any_bytes_are_accepted_or_refused_with_image_rejected(data: bytes) -> None:
    try:
        info = check_image(data, LIMITS)
    except ImageRejected as rejected:
        assert rejected.reason in ("too_large", "unreadable")
        return
    assert info.width * info.height <= LIMITS.max_pixels


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 200), st.integers(1, 200))
def test_sizes_over_the_limits_are_refused_before_decoding(width: int, height: int) -> None:
    data = _png(width, height)
    if max(width, height) > LIMITS.max_side or width * height > LIMITS.max_pixels:
        with pytest.raises(ImageRejected, match=f"{width}×{height} px"):
            check_image(data, LIMITS)
    else:
        assert (check_image(data, LIMITS).width, check_image(data, LIMITS).height) == (
            width,
            height,
        )


LINE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\ufeff"))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(lines=st.lists(LINE, max_size=8), bom=st.booleans())
def test_utf8_files_read_back_line_for_line(tmp_path: Path, lines: list[str], bom: bool) -> None:
    path = tmp_path / "data.jsonl"
    text = "".join(line + "\n" for line in lines)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    read = [(number, text.removesuffix("\n")) for number, text in utf8_lines(path)]
    # Blank lines are skipped by every reader (a lone byte-order mark reads as one).
    assert [r for r in read if r[1]] == [w for w in enumerate(lines, start=1) if w[1]]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=8), data=st.data())
def test_a_byte_that_is_not_utf8_is_refused_naming_its_line(
    tmp_path: Path, lines: list[str], data: st.DataObject
) -> None:
    bad = data.draw(st.integers(0, len(lines) - 1))
    encoded = [line.encode("utf-8") for line in lines]
    encoded[bad] += b"\xff"  # never part of UTF-8
    path = tmp_path / "data.csv"
    path.write_bytes(b"\n".join(encoded))
    with pytest.raises(DatasetError, match=f"line {bad + 1}, byte {len(encoded[bad])} is 0xFF"):
        list(utf8_lines(path))


@given(st.lists(st.one_of(st.none(), st.just(""), st.just("  "), st.text(min_size=1)), max_size=8))
def test_option_columns_keep_every_option_on_its_letter_or_are_refused(
    values: list[str | None],
) -> None:
    columns = tuple(LETTERS[: len(values)])
    row = dict(zip(columns, values, strict=True))
    filled = [v is not None and v.strip() != "" for v in values]
    try:
        options = _column_options("item", row, columns)
    except ItemError as error:
        last = max(i for i, f in enumerate(filled) if f)
        assert not all(filled[:last]), "refused although no option was missing"
        assert error.field == "options"
        return
    assert options == values[: len(options)]  # nothing shifted to another letter
    assert all(filled[: len(options)]) and not any(filled[len(options) :])


# Keys are made of these; "[REDACTED]" shares none of them, so no replacement makes a new one.
KEY_ALPHABET = string.ascii_lowercase + string.digits + "-_"


@given(st.text(KEY_ALPHABET, min_size=6), st.lists(st.text(), max_size=4))
def test_a_redacted_text_never_holds_the_secret(secret: str, pieces: list[str]) -> None:
    text = secret.join(pieces) + secret
    cleaned = Redactor.of(secret).value({"error": text, "parts": [text, {text: (text,)}]})
    leaves = [
        cleaned["error"],
        cleaned["parts"][0],
        *cleaned["parts"][1],
        *next(iter(cleaned["parts"][1].values())),
    ]
    assert all(secret not in leaf for leaf in leaves)
    assert REDACTED in cleaned["error"]
