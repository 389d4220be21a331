"""Figures as a person sees them: one still, upright, 8-bit image for the page and the audit.

The figures are drawn here with Pillow: an animated GIF whose frames differ in
colour, a 16-bit grey PNG and JPEGs stored sideways with an EXIF orientation
tag. Real Chromium renders them and the real verifier checks the figures.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from itemshot.renderer.adapters.figures import decode_figure as load_figure
from itemshot.renderer.output import read_jsonl
from itemshot.verify.checks.figures import decode_figure as audit_figure
from tests.conftest import job_sidecar, run_cli

FLAGS = ("--scene", "plain", "--font-size", "22", "--seed", "1", "--no-progress")
FRAME_COLOURS = ((214, 39, 40), (44, 160, 44), (31, 119, 180))  # red, green, blue bars
UPRIGHT = (360, 200)  # the rotated figure as it should stand: wide, not tall


def chart(size: tuple[int, int], fill: tuple[int, int, int]) -> Image.Image:
    """Return a bar chart whose only black disc is in its top-right corner (shows rotation)."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    width, height = size
    draw.rectangle((6, 6, width - 7, height - 7), outline="black", width=3)
    for bar in range(4):
        left = 24 + bar * (width - 130) // 4
        top = height - 24 - (bar + 1) * (height - 60) // 5
        draw.rectangle((left, top, left + (width - 130) // 4 - 8, height - 24), fill=fill)
    draw.ellipse((width - 70, 16, width - 24, 62), fill="black")
    return image


def write_items(folder: Path, figures: dict[str, str]) -> Path:
    """Write one item per figure file (id → file name under `figures/`); return the JSONL."""
    rows = [
        {"id": item_id, "question": "What kind of chart is <image 1>?",
         "options": ["A bar chart", "A pie chart", "A map", "A table"], "answer": "A",
         "image_1": f"figures/{name}"}
        for item_id, name in figures.items()
    ]  # fmt: skip
    path = folder / "items.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return path


def figure_crop(out: Path, row: dict) -> np.ndarray:
    """Return the pixels of the row's figure region in its image."""
    layout = job_sidecar(out, row)["layout"]
    (box,) = [r["box"] for r in layout["regions"] if r["kind"] == "figure"]
    x0, y0, x1, y1 = (round(v) for v in box)
    with Image.open(out / row["image"]) as image:
        return np.asarray(image.convert("RGB"))[y0:y1, x0:x1]


def corner_ink(crop: np.ndarray) -> dict[str, float]:
    """Return the share of dark pixels in each corner (a third high, a quarter wide)."""
    dark = crop.mean(axis=2) < 60
    height, width = dark.shape
    rows = {"top": slice(0, height // 3), "bottom": slice(height - height // 3, height)}
    cols = {"left": slice(0, width // 4), "right": slice(width - width // 4, width)}
    return {f"{r} {c}": float(dark[rows[r], cols[c]].mean()) for r in rows for c in cols}


def share_near(crop: np.ndarray, colour: tuple[int, int, int], tolerance: int = 40) -> float:
    """Return the share of a crop's pixels within `tolerance` of a colour on every channel."""
    near = np.all(np.abs(crop.astype(int) - np.array(colour)) <= tolerance, axis=2)
    return float(near.mean())


def test_an_animated_gif_renders_at_its_first_frame_byte_for_byte_in_every_run(
    tmp_path: Path,
) -> None:
    frames = [chart((320, 220), colour) for colour in FRAME_COLOURS]
    (tmp_path / "figures").mkdir()
    frames[0].save(
        tmp_path / "figures" / "anim.gif", save_all=True, append_images=frames[1:],
        duration=20, loop=0,
    )  # fmt: skip
    dataset = write_items(tmp_path, {"animated": "anim.gif"})
    images = []
    for run in range(5):
        out = tmp_path / f"out{run}"
        verify = () if run == 0 else ("--no-verify",)  # the audit once; the bytes every time
        assert run_cli("render", dataset, "--out", out, *FLAGS, *verify) == 0
        (row,) = read_jsonl(out / "manifest.jsonl")
        images.append((out / row["image"]).read_bytes())
        if run == 0:
            assert row["verdict"] == "pass", row["verify"]["reasons"]
            crop = figure_crop(out, row)
            assert share_near(crop, FRAME_COLOURS[0]) > 0.05  # frame 0's red bars
            assert max(share_near(crop, colour) for colour in FRAME_COLOURS[1:]) < 0.001
            assert job_sidecar(out, row)["render"]["figures_normalised"] == {
                "1": ["first of 3 frames"]
            }
            with Image.open(out / row["figure_files"]["1"]) as shown:  # what the page was given
                assert (shown.format, getattr(shown, "n_frames", 1)) == ("PNG", 1)
    assert all(image == images[0] for image in images[1:])


def test_16_bit_grey_and_exif_rotated_figures_render_upright_and_pass_the_figure_check(
    tmp_path: Path,
) -> None:
    (tmp_path / "figures").mkdir()
    grey = np.asarray(chart((320, 220), (85, 85, 85)).convert("L")).astype(np.uint16) * 257
    Image.fromarray(grey).save(tmp_path / "figures" / "grey16.png")  # mode I;16
    upright = chart(UPRIGHT, (148, 103, 189))
    # Stored sideways, with the tag that tells a viewer how to stand it up:
    # 6 = turn 90° clockwise to display, 8 = turn 90° counter-clockwise.
    for tag, turn in ((6, 90), (8, 270)):
        exif = Image.Exif()
        exif[0x0112] = tag
        upright.rotate(turn, expand=True).save(
            tmp_path / "figures" / f"rot{tag}.jpg", quality=95, exif=exif.tobytes()
        )
    dataset = write_items(
        tmp_path, {"grey16": "grey16.png", "exif6": "rot6.jpg", "exif8": "rot8.jpg"}
    )
    out = tmp_path / "out"
    assert run_cli("render", dataset, "--out", out, *FLAGS) == 0
    rows = {row["item_id"]: row for row in read_jsonl(out / "manifest.jsonl")}
    for item_id, size in (("grey16", (320, 220)), ("exif6", UPRIGHT), ("exif8", UPRIGHT)):
        row = rows[item_id]
        assert row["verdict"] == "pass", (item_id, row["verify"]["reasons"])
        crop = figure_crop(out, row)
        height, width = crop.shape[:2]
        assert abs(width / height - size[0] / size[1]) < 0.03, (item_id, width, height)
        corners = corner_ink(crop)
        # The disc is top right: upright, neither turned nor mirrored.
        assert max(corners, key=corners.__getitem__) == "top right", (item_id, corners)
        assert corners["top right"] > 3 * max(v for k, v in corners.items() if k != "top right")
    grey_bars = share_near(figure_crop(out, rows["grey16"]), (85, 85, 85), 12)
    assert grey_bars > 0.05  # mid grey, as drawn: not clipped to white
    notes = {i: job_sidecar(out, rows[i])["render"]["figures_normalised"] for i in rows}
    assert notes == {
        "grey16": {"1": ["16-bit samples scaled to 8-bit"]},
        "exif6": {"1": ["EXIF orientation 6 applied"]},
        "exif8": {"1": ["EXIF orientation 8 applied"]},
    }


def test_the_audit_reads_a_source_figure_as_the_page_shows_it(tmp_path: Path) -> None:
    """One normalisation: the verifier's reading of the raw file equals the page's figure."""
    frames = [chart((320, 220), colour) for colour in FRAME_COLOURS]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], duration=20)
    sideways = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6
    chart(UPRIGHT, (0, 0, 0)).rotate(90, expand=True).save(
        sideways, format="PNG", exif=exif.tobytes()
    )
    grey = io.BytesIO()
    Image.fromarray(np.full((40, 60), 30000, dtype=np.uint16)).save(grey, format="PNG")
    for raw in (buffer.getvalue(), sideways.getvalue(), grey.getvalue()):
        shown = load_figure(1, raw, "figure")
        assert shown.mime == "image/png" and shown.normalised
        assert np.array_equal(audit_figure(raw), audit_figure(shown.data))
        assert audit_figure(raw).shape == (shown.height, shown.width)
    assert audit_figure(sideways.getvalue()).shape == (UPRIGHT[1], UPRIGHT[0])
    assert int(audit_figure(grey.getvalue())[0, 0]) == round(30000 / 257)  # scaled, not 255
