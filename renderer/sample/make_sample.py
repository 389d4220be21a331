"""Regenerate the embedded sample dataset: figures drawn with PIL, items in JSONL.

Run `python -m itemshot.renderer.sample.make_sample` after editing; the outputs are
committed so the demo needs nothing but this package.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).parent
FIGURES = HERE / "figures"


def _font(family: str, size: int) -> ImageFont.FreeTypeFont:
    path = subprocess.run(
        ["fc-match", "-f", "%{file}", family], capture_output=True, text=True, check=True
    ).stdout.strip()
    return ImageFont.truetype(path, size)


def bar_chart(name: str, labels: list[str], values: list[float], title: str, family: str) -> str:
    """Draw a labelled bar chart and return its file name."""
    width, height = 640, 420
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    font, small = _font(family, 22), _font(family, 18)
    draw.text((width // 2, 22), title, fill="black", font=font, anchor="mm")
    left, bottom, top = 70, height - 60, 60
    top_value = max(values) * 1.15
    draw.line((left, top, left, bottom), fill="black", width=2)
    draw.line((left, bottom, width - 20, bottom), fill="black", width=2)
    for tick in range(0, int(top_value) + 1, max(1, int(top_value // 5))):
        y = bottom - (bottom - top) * tick / top_value
        draw.line((left - 6, y, left, y), fill="black", width=2)
        draw.text((left - 10, y), str(tick), fill="black", font=small, anchor="rm")
    slot = (width - 20 - left) / len(values)
    colours = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"]
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        x0 = left + slot * index + slot * 0.2
        x1 = x0 + slot * 0.6
        y0 = bottom - (bottom - top) * value / top_value
        draw.rectangle((x0, y0, x1, bottom), fill=colours[index % len(colours)])
        draw.text(((x0 + x1) / 2, bottom + 20), label, fill="black", font=small, anchor="mm")
    image.save(FIGURES / name)
    return name


def parabola(name: str) -> str:
    """Draw y = 2x^2 - 3 on a grid with marked points."""
    size = 480
    image = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(image)
    small = _font("DejaVu Sans", 16)
    scale, cx, cy = 40, size // 2, size // 2 + 80
    for k in range(-6, 7):
        draw.line((cx + k * scale, 0, cx + k * scale, size), fill="#e4e4e4")
        draw.line((0, cy + k * scale, size, cy + k * scale), fill="#e4e4e4")
    draw.line((0, cy, size, cy), fill="black", width=2)
    draw.line((cx, 0, cx, size), fill="black", width=2)
    points = []
    for step in range(-300, 301):
        x = step / 100
        y = 2 * x * x - 3
        points.append((cx + x * scale, cy - y * scale))
    draw.line(points, fill="#c0392b", width=3)
    for x, y in ((0, -3), (1, -1), (2, 5)):
        px, py = cx + x * scale, cy - y * scale
        draw.ellipse((px - 5, py - 5, px + 5, py + 5), fill="#1f4e9a")
        draw.text((px + 8, py), f"({x}, {y})", fill="#1f4e9a", font=small, anchor="lm")
    image.save(FIGURES / name)
    return name


def triangle(name: str) -> str:
    """Draw triangle ABC with two marked angles."""
    image = Image.new("RGB", (520, 380), "white")
    draw = ImageDraw.Draw(image)
    font = _font("DejaVu Sans", 24)
    a, b, c = (60, 320), (460, 320), (190, 60)
    draw.polygon([a, b, c], outline="black", width=3)
    draw.text((40, 335), "A", fill="black", font=font)
    draw.text((465, 335), "B", fill="black", font=font)
    draw.text((180, 25), "C", fill="black", font=font)
    draw.arc((20, 280, 100, 360), start=-64, end=0, fill="#c0392b", width=3)
    draw.text((110, 290), "55°", fill="#c0392b", font=font)
    draw.arc((420, 280, 500, 360), start=180, end=213, fill="#1f4e9a", width=3)
    draw.text((380, 290), "35°", fill="#1f4e9a", font=font)
    draw.text((190, 100), "x", fill="black", font=font)
    image.save(FIGURES / name)
    return name


def shape(name: str, sides: int, star: bool = False) -> str:
    """Draw a regular polygon (or a star) for an image-only option."""
    size = 240
    image = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(image)
    centre, radius = size / 2, size * 0.4
    points = []
    count = sides * (2 if star else 1)
    for k in range(count):
        r = radius * (0.45 if star and k % 2 else 1.0)
        angle = -math.pi / 2 + 2 * math.pi * k / count
        points.append((centre + r * math.cos(angle), centre + r * math.sin(angle)))
    if sides == 0:
        draw.rectangle((40, 70, 200, 170), outline="black", fill="#d6e4f0", width=3)
    else:
        draw.polygon(points, outline="black", fill="#d6e4f0", width=3)
    image.save(FIGURES / name)
    return name


def circuit(name: str, labels: tuple[str, str, str]) -> str:
    """Draw a battery with two resistors in series and one in parallel."""
    image = Image.new("RGB", (560, 340), "white")
    draw = ImageDraw.Draw(image)
    font = _font("Noto Sans CJK JP", 22)
    w = 3
    draw.line((60, 60, 500, 60), fill="black", width=w)
    draw.line((60, 280, 500, 280), fill="black", width=w)
    draw.line((60, 60, 60, 140), fill="black", width=w)
    draw.line((60, 200, 60, 280), fill="black", width=w)
    draw.line((35, 140, 85, 140), fill="black", width=w)
    draw.line((47, 160, 73, 160), fill="black", width=w)
    draw.line((35, 180, 85, 180), fill="black", width=w)
    draw.line((47, 200, 73, 200), fill="black", width=w)
    draw.text((95, 165), labels[0], fill="black", font=font, anchor="lm")
    for x0, text in ((200, labels[1]), (330, labels[2])):
        draw.rectangle((x0, 45, x0 + 80, 75), outline="black", fill="white", width=w)
        draw.text((x0 + 40, 100), text, fill="black", font=font, anchor="mm")
    draw.line((500, 60, 500, 120), fill="black", width=w)
    draw.rectangle((485, 120, 515, 220), outline="black", fill="white", width=w)
    draw.text((470, 170), "6 Ω", fill="black", font=font, anchor="rm")
    draw.line((500, 220, 500, 280), fill="black", width=w)
    image.save(FIGURES / name)
    return name


def table_figure(name: str) -> str:
    """Draw a small data table as an image (a common figure type in MMMU)."""
    rows = [
        ("Year", "Sales (units)", "Price ($)"),
        ("2019", "1,200", "45"),
        ("2020", "1,450", "42"),
    ]
    rows += [("2021", "1,700", "40"), ("2022", "2,100", "38")]
    image = Image.new("RGB", (600, 260), "white")
    draw = ImageDraw.Draw(image)
    font = _font("DejaVu Sans", 20)
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            x0, y0 = 20 + c * 190, 20 + r * 44
            draw.rectangle(
                (x0, y0, x0 + 190, y0 + 44),
                outline="black",
                width=2,
                fill="#eef3f8" if r == 0 else "white",
            )
            draw.text((x0 + 95, y0 + 22), cell, fill="black", font=font, anchor="mm")
    image.save(FIGURES / name)
    return name


LONG_STEM = (
    "A regional bakery chain is reviewing its delivery operations. Each of its five shops "
    "receives one morning delivery from a central kitchen. The kitchen currently uses two vans; "
    "each van can carry at most 300 loaves and must return to the kitchen before a second run. "
    "Drivers are paid $18 per hour, fuel costs $0.25 per kilometre, and every van costs $40 per "
    "day to lease regardless of use. Last month the chain recorded an average of 1,150 loaves "
    "ordered per day across all shops, with the busiest shop alone ordering 420 loaves on "
    "Saturdays. The table in <image 1> shows the chain's yearly sales and average price per "
    "unit. Management wants a plan that keeps delivery cost per loaf below $0.12 while never "
    "leaving a shop short on Saturdays, and it is considering leasing a third van, extending "
    "drivers' shifts, or moving the Saturday delivery of the busiest shop to the previous "
    "evening. Using the information given, and assuming demand keeps growing at the same "
    "average yearly rate shown in the table, which conclusion is best supported?"
)


def items() -> list[dict[str, object]]:
    """Return the sample items, drawing their figures on the way."""
    return [
        {
            "id": "en-rainfall",
            "subject": "Geography",
            "question": "According to <image 1>, which city had the highest rainfall in 2023?",
            "options": ["Oslo", "Lima", "Perth", "Dhaka"],
            "answer": "D",
            "image_1": "figures/"
            + bar_chart(
                "rainfall.png",
                ["Oslo", "Lima", "Perth", "Dhaka"],
                [76, 15, 73, 210],
                "Rainfall in 2023 (cm)",
                "DejaVu Sans",
            ),
        },
        {
            "id": "en-parabola",
            "subject": "Mathematics",
            "question": "The curve in <image 1> has the form $y = ax^2 + b$. "
            "What are the values of $a$ and $b$?",
            "options": [
                "$a = 2,\\ b = -3$",
                "$a = -2,\\ b = 3$",
                "$a = 1,\\ b = -3$",
                "$a = 2,\\ b = 3$",
            ],
            "answer": "A",
            "image_1": "figures/" + parabola("parabola.png"),
        },
        {
            "id": "en-triangle",
            "subject": "Mathematics",
            "question": "In <image 1>, the angles at A and B are marked. The angle x at C "
            "satisfies $$x = 180^\\circ - (\\angle A + \\angle B).$$ What is x?",
            "options": ["80°", "90°", "100°", "110°"],
            "answer": "B",
            "image_1": "figures/" + triangle("triangle.png"),
        },
        {
            "id": "en-combustion",
            "subject": "Chemistry",
            "question": "Methane burns as $\\ce{CH4 + 2O2 -> CO2 + 2H2O}$. How many moles of "
            "water form when 3 mol of methane burn completely?",
            "options": ["3 mol", "4 mol", "6 mol", "9 mol"],
            "answer": "C",
        },
        {
            "id": "en-symmetry",
            "subject": "Mathematics",
            "question": "Which shape has exactly three lines of symmetry?",
            "options": ["<image 1>", "<image 2>", "<image 3>", "<image 4>"],
            "answer": "B",
            "image_1": "figures/" + shape("square.png", 4),
            "image_2": "figures/" + shape("equilateral.png", 3),
            "image_3": "figures/" + shape("rectangle.png", 0),
            "image_4": "figures/" + shape("star.png", 5, star=True),
        },
        {
            "id": "en-bakery-long",
            "subject": "Business",
            "question": LONG_STEM,
            "options": [
                "Two vans suffice for every day of the week.",
                "A third van is needed only on Saturdays.",
                "Moving the busiest shop's Saturday delivery to the evening before removes the "
                "shortage without a third van.",
                "Extending shifts raises cost per loaf above $0.12.",
                "Demand will fall next year.",
                "Fuel is the largest delivery cost.",
                "The busiest shop orders half of all loaves.",
                "Leasing cost is paid only on days a van is used.",
                "Prices per unit have risen every year.",
                "No plan can meet both goals.",
            ],
            "answer": "C",
            "image_1": "figures/" + table_figure("sales_table.png"),
        },
        {
            "id": "en-change",
            "subject": "Economics",
            "question": "A notebook costs $5 and a pen costs $3. Maya pays with a $20 note for "
            "two notebooks and one pen. How much change does she receive?",
            "options": ["$7", "$9", "$12", "$13"],
            "answer": "A",
        },
        {
            "id": "en-two-figures",
            "subject": "Geography",
            "question": "Compare <image 1> and <image 2>. Which city shows the larger increase "
            "from the first chart to the second?",
            "options": ["Oslo", "Lima", "Perth", "Dhaka"],
            "answer": "C",
            "image_1": "figures/rainfall.png",
            "image_2": "figures/"
            + bar_chart(
                "rainfall_2024.png",
                ["Oslo", "Lima", "Perth", "Dhaka"],
                [80, 18, 120, 215],
                "Rainfall in 2024 (cm)",
                "DejaVu Sans",
            ),
        },
        {
            "id": "ja-sales",
            "subject": "社会",
            "language": "ja",
            "question": "<image 1>のグラフによると、2023年に売上が最も多かった店舗はどれか。",
            "options": ["東京店", "大阪店", "名古屋店", "福岡店"],
            "answer": "B",
            "image_1": "figures/"
            + bar_chart(
                "sales_ja.png",
                ["東京店", "大阪店", "名古屋店", "福岡店"],
                [120, 185, 90, 60],
                "2023年の売上（百万円）",
                "Noto Sans CJK JP",
            ),
        },
        {
            "id": "ja-quadratic",
            "subject": "数学",
            "language": "ja",
            "question": "二次方程式 $x^2 - 5x + 6 = 0$ の解として正しいものはどれか。",
            "options": ["$x = 1, 6$", "$x = 2, 3$", "$x = -2, -3$", "$x = -1, 6$"],
            "answer": "B",
        },
        {
            "id": "ja-circuit",
            "subject": "物理",
            "language": "ja",
            "question": "<image 1>の回路で、電源の電圧は12 Vである。6 Ωの抵抗に流れる電流は何Aか。",
            "options": ["0.5 A", "1 A", "2 A", "3 A"],
            "answer": "C",
            "image_1": "figures/" + circuit("circuit_ja.png", ("12 V", "2 Ω", "4 Ω")),
        },
        {
            "id": "ja-history",
            "subject": "歴史",
            "language": "ja",
            "question": "江戸幕府を開いた人物は誰か。",
            "options": [
                "織田信長",
                "豊臣秀吉",
                "徳川家康",
                "足利尊氏",
                "源頼朝",
                "徳川慶喜",
                "北条時宗",
                "明智光秀",
                "武田信玄",
                "上杉謙信",
            ],
            "answer": "C",
        },
    ]


def main() -> None:
    """Draw the figures and write sample.jsonl."""
    FIGURES.mkdir(exist_ok=True)
    rows = items()
    with (HERE / "sample.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
