"""The planner: Connor's McNemar formula, its simulation check, the reverse, and `itemshot plan`."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest

import itemshot
from itemshot.cli.plan import register
from itemshot.factorial.analysis.power import (
    detectable_effect,
    discordance,
    mcnemar_power,
    outcomes_from_records,
    simulated_power,
)

ROOT = Path(__file__).resolve().parents[1]
PILOT = ROOT / "tests" / "data" / "mmmu-pro" / "pilot"
ABLATION = ROOT / "designs" / "presentation_ablation.yaml"


def main(argv: list[str]) -> int:
    """Run `itemshot plan` exactly as `itemshot` dispatches it."""
    parser = argparse.ArgumentParser(prog="itemshot")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args) or 0)


def test_ten_points_with_thirty_percent_discordant_needs_about_233_items() -> None:
    result = itemshot.plan(effect=0.10, discordant=0.30, power=0.80, alpha=0.05)
    assert result.solved == "items"
    assert 233 <= result.items_exact < 234  # Connor's formula, before rounding up
    assert result.items == math.ceil(result.items_exact)
    # The simulation check of the plan itself: the asymptotic test reaches the power.
    assert abs(result.simulated_power - 0.80) <= 0.05
    assert result.simulated_power_exact <= result.simulated_power  # the exact test is stricter


@pytest.mark.parametrize("effect", [0.05, 0.10, 0.15])
def test_predicted_power_agrees_with_simulation(effect: float) -> None:
    # The same 150 items at three effects: predicted powers far apart (about 0.3, 0.6, 0.9).
    predicted = mcnemar_power(150, effect, 0.30)
    simulated = simulated_power(150, effect, 0.30, simulations=4000, seed=11)
    print(f"effect {effect:.2f}: predicted power {predicted:.3f}, simulated {simulated:.3f}")
    assert abs(predicted - simulated) <= 0.05


def test_the_reverse_gives_the_effect_the_items_detect() -> None:
    forward = itemshot.plan(effect=0.10, discordant=0.30, simulations=0)
    reverse = itemshot.plan(items=forward.items, discordant=0.30, simulations=0)
    assert reverse.solved == "effect" and reverse.items == forward.items
    assert reverse.effect <= 0.10  # rounding the items up buys a little
    assert mcnemar_power(forward.items, reverse.effect, 0.30) == pytest.approx(0.80, abs=1e-6)
    # More items detect less; no effect is detectable beyond what the discordant pairs allow.
    assert detectable_effect(4 * forward.items, 0.30) < reverse.effect / 1.9
    assert math.isnan(detectable_effect(3, 0.30))


def test_unusable_rates_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="discordant rate of at least"):
        itemshot.plan(effect=0.20, discordant=0.10)
    with pytest.raises(ValueError, match="either effect"):
        itemshot.plan(effect=0.10, items=100)


def _pilot(name: str) -> dict[str, bool]:
    lines = (PILOT / name).read_text(encoding="utf-8").splitlines()
    return outcomes_from_records(json.loads(line) for line in lines)


def test_pilot_discordance_from_the_gpt4o_outputs() -> None:
    vision = _pilot("gpt-4o_vision_direct.jsonl")
    standard = _pilot("gpt-4o_standard10_direct.jsonl")
    pairs = discordance(vision, standard)
    assert pairs.n_items == len(vision) == len(standard)
    by_hand = sum(vision[i] != standard[i] for i in vision)
    assert pairs.only_first + pairs.only_second == by_hand
    assert pairs.rate == by_hand / len(vision)


def test_plan_command_plans_every_contrast_of_the_shipped_ablation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pilot = [
        str(PILOT / "gpt-4o_vision_direct.jsonl"),
        str(PILOT / "gpt-4o_standard10_direct.jsonl"),
    ]
    assert main(["plan", str(ABLATION), "--pilot", *pilot, "--json"]) == 0
    plans = json.loads(capsys.readouterr().out)
    pairs = discordance(
        _pilot("gpt-4o_vision_direct.jsonl"), _pilot("gpt-4o_standard10_direct.jsonl")
    )
    # scene 3, font style 3, font size 2, resolution 2, capture 4 levels beside the reference
    assert len(plans) == 14
    assert {p["factor"] for p in plans} == {
        "scene",
        "font_style",
        "font_size",
        "resolution",
        "capture",
    }
    expected = itemshot.plan(effect=0.10, discordant=pairs.rate, simulations=0).items
    for item in plans:
        assert item["discordant"] == pairs.rate and "gpt-4o_vision_direct" in item["source"]
        assert item["items"] == expected
        assert item["items_family"] > item["items"]  # Holm across 14 contrasts asks for more
        assert item["available"] == 12  # the embedded sample the design names
        assert math.isnan(item["detectable"]) or item["detectable"] > 0.10

    assert main(["plan", str(ABLATION), "--pilot", *pilot]) == 0
    table = capsys.readouterr().out
    assert "font_style: handwritten − regular" in table and str(expected) in table


def test_plan_command_single_contrast_and_reverse(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--effect", "0.10", "--discordant", "0.30", "--simulations", "500"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("234 items detect a difference of 10.0 points")
    assert "simulated power over 500 sets" in out
    assert main(["plan", "--items", "234", "--discordant", "0.30", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["solved"] == "effect" and 0.09 < record["effect"] <= 0.10
    assert main(["plan", "--effect", "0.5", "--discordant", "0.30"]) == 2
    assert "discordant rate of at least" in capsys.readouterr().err
