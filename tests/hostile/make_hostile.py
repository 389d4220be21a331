"""Write the hostile inputs of the fault-injection tests (run once; the files are committed).

    python tests/hostile/make_hostile.py

Every file is one thing a dataset found in the wild (or a server) can hold:
see `tests/hostile/README.md` for which case each one is.
"""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path

from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
OPTIONS = ["alpha", "beta", "gamma", "delta"]
BLOCKED = (
    "href",
    "url",
    "includegraphics",
    "htmlStyle",
    "htmlClass",
    "htmlId",
    "htmlData",
    "input",
)
BLOCKED_LATEX = {
    "href": r"\href{http://example.com/x}{click}",
    "url": r"\url{http://example.com/x}",
    "includegraphics": r"\includegraphics{file:///etc/hostname}",
    "htmlStyle": r"\htmlStyle{color: red}{x}",
    "htmlClass": r"\htmlClass{evil}{x}",
    "htmlId": r"\htmlId{evil}{x}",
    "htmlData": r"\htmlData{foo=bar}{x}",
    "input": r"\input{/etc/passwd}",
}


def chart() -> bytes:
    """Return a small bar chart PNG (a valid figure)."""
    image = Image.new("RGB", (240, 160), "white")
    draw = ImageDraw.Draw(image)
    for index, height in enumerate((60, 110, 35, 90)):
        draw.rectangle((20 + index * 55, 150 - height, 55 + index * 55, 150), fill=(40, 90, 160))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def broken_stream(png: bytes) -> bytes:
    """Return the PNG with its pixel data replaced by bytes that are not a zlib stream.

    Every chunk checksum is right, so the header and Pillow's `verify()`
    accept it; only decoding the pixels fails ("broken data stream").
    """
    out = bytearray(png[:8])
    position = 8
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        data = png[position + 8 : position + 8 + length]
        if kind == b"IDAT":
            data = bytes(data[:2]) + bytes((i * 37) % 251 for i in range(len(data) - 2))
        out += struct.pack(">I", len(data)) + kind + data
        out += struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        position += 12 + length
    return bytes(out)


def bomb() -> bytes:
    """Return a valid 20000×20000 PNG of about 48 KB (1.6 GB once decoded as RGBA)."""
    buffer = io.BytesIO()
    Image.new("1", (20000, 20000)).save(buffer, "PNG", optimize=True)
    return buffer.getvalue()


def item(item_id: str, question: str, options: list = OPTIONS, **extra: object) -> dict:
    return {"id": item_id, "question": question, "options": options, "answer": "B", **extra}


def items() -> list[dict]:
    rows = [
        item("good-text", "Which of these is the second letter of the Greek alphabet?"),
        item("good-figure", "Which bar in <image 1> is the tallest?", image_1="figures/ok.png"),
        item("good-math", r"What is $\frac{1}{2} + \frac{1}{2}$?", ["$0$", "$1$", "$2$", "$3$"]),
        item("surrogate-question", "Is this \ud800 character valid?"),
        item("surrogate-option", "Which option is broken?", ["fine", "bad \udc80", "ok", "also"]),
        item("nontext-object", "Which option is a mapping?", [{"a": 1}, "b", "c", "d"]),
        item("nontext-bool", "Which option is a boolean?", ["a", True, "c", "d"]),
        item("corrupt-figure", "What does <image 1> show?", image_1="figures/corrupt.png"),
        item(
            "option-latex-error",
            "Which fraction is broken?",
            ["$1$", "$2$", r"$\frac{1}{2$", "$4$"],
        ),
        item(
            "blocked-in-option",
            "Which option links away?",
            ["a", r"$\url{http://example.com}$", "c", "d"],
        ),
    ]
    rows += [item(f"blocked-{name}", f"Evaluate ${BLOCKED_LATEX[name]}$ now.") for name in BLOCKED]
    return rows


def main() -> None:
    figure = chart()
    (HERE / "figures" / "ok.png").write_bytes(figure)
    (HERE / "figures" / "corrupt.png").write_bytes(broken_stream(figure))
    (HERE / "bomb.png").write_bytes(bomb())
    lines = [json.dumps(row) for row in items()]  # ASCII: surrogates stay JSON escapes
    (HERE / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="ascii")
    # Excel's "CSV UTF-8": a byte-order mark, one column per option; one row has a gap.
    excel = (
        "id,question,A,B,C,D,answer\r\n"
        "bom-1,Which letter is first?,a,b,c,d,A\r\n"
        "bom-2,Which word means two?,one,two,three,four,B\r\n"
        "gap-1,Which one is z?,x,,z,w,C\r\n"
        "short-1,Which of two is yes?,no,yes,,,B\r\n"
    )
    (HERE / "excel.csv").write_bytes(b"\xef\xbb\xbf" + excel.encode("utf-8"))
    good = [json.dumps(item(f"line-{n}", f"Plain question {n}?")) for n in (1, 2)]
    latin = [*good, json.dumps(item("line-3", "Caf\u00e9 or tea?"), ensure_ascii=False)]
    (HERE / "latin1.jsonl").write_bytes(("\n".join(latin) + "\n").encode("latin-1"))
    csv_rows = ["question,options,answer", *(f"Plain question {n}?,\"['a', 'b']\",A" for n in (1,))]
    csv_rows.append("Caf\u00e9 or tea?,\"['a', 'b']\",A")
    (HERE / "latin1.csv").write_bytes(("\n".join(csv_rows) + "\n").encode("latin-1"))
    (HERE / "empty.jsonl").write_bytes(b"")
    (HERE / "empty.csv").write_bytes(b"")
    (HERE / "header_only.csv").write_text("question,options,answer\n", encoding="utf-8")
    (HERE / "empty.parquet").write_bytes(b"")


if __name__ == "__main__":
    main()
