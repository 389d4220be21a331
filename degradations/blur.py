"""Camera blur through albumentations 2.0.8: defocus, motion and Gaussian blur.

Albumentations draws the blur (a motion kernel, a defocus radius) with its own
seed (`Compose(seed=…)`, the only seed it honours) and reports it through
`save_applied_params`; the step records those values and replays them by
calling the transform's `apply` with them, so no albumentations random state
is needed on replay.
"""

from __future__ import annotations

import os
import threading
from typing import Any

os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

import albumentations as A
import numpy as np

from itemshot.degradations.frame import Frame, Params, Transform, register

_PROBE = np.zeros((8, 8, 3), np.uint8)


def _albumentations(kind: str, spec: dict[str, Any]) -> A.BasicTransform:
    if kind == "motion":
        return A.MotionBlur(blur_limit=tuple(spec["motion"]), allow_shifted=False, p=1.0)
    if kind == "defocus":
        return A.Defocus(radius=tuple(spec["defocus"]), alias_blur=(0.1, 0.3), p=1.0)
    if kind == "gaussian":
        return A.GaussianBlur(blur_limit=0, sigma_limit=tuple(spec["gaussian"]), p=1.0)
    raise ValueError(f"unknown blur kind {kind!r}")


# A Compose carries its random generator and the parameters of its last call, so
# one shared by the executor's worker threads would let one thread's reseed or
# call land between another's (a wrong or empty record): each thread keeps its own.
_THREAD = threading.local()
_APPLIERS: dict[str, A.BasicTransform] = {}


def _compose(kind: str, spec: dict[str, Any], seed: int) -> A.Compose:
    """Return this thread's cached one-transform Compose for `kind`, reseeded with `seed`."""
    composes: dict[tuple[str, tuple[float, ...]], A.Compose] = _THREAD.__dict__.setdefault(
        "composes", {}
    )
    key = (kind, tuple(spec[kind]))
    compose = composes.get(key)
    if compose is None:
        compose = A.Compose([_albumentations(kind, spec)], seed=seed, save_applied_params=True)
        composes[key] = compose
    compose.set_random_seed(seed)
    return compose


def _applier(kind: str) -> A.BasicTransform:
    """Return the (stateless for `apply`) albumentations transform of a blur kind."""
    if kind not in _APPLIERS:
        _APPLIERS[kind] = {
            "motion": A.MotionBlur,
            "defocus": A.Defocus,
            "gaussian": A.GaussianBlur,
        }[kind](p=1.0)
    return _APPLIERS[kind]


def _to_record(params: dict[str, Any]) -> Params:
    record: Params = {}
    for key, value in params.items():
        if key == "shape":
            continue
        if isinstance(value, np.ndarray):
            record[key] = {"array": value.tolist(), "dtype": str(value.dtype)}
        else:
            record[key] = value
    return record


def _from_record(record: Params) -> dict[str, Any]:
    return {
        key: np.asarray(value["array"], value["dtype"]) if isinstance(value, dict) else value
        for key, value in record.items()
    }


@register
class CameraBlur(Transform):
    """Defocus, motion or Gaussian blur, chosen by weight and drawn by albumentations."""

    name = "camera_blur"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Pick the blur kind and let albumentations draw its parameters (kernel or radius)."""
        weights = self.spec["weights"]
        kinds = sorted(weights)
        probs = np.asarray([weights[k] for k in kinds], np.float64)
        kind = kinds[int(rng.choice(len(kinds), p=probs / probs.sum()))]
        seed = int(rng.integers(2**31 - 1))
        applied = _compose(kind, self.spec, seed)(image=_PROBE)["applied_transforms"]
        return {"kind": kind, "albumentations_seed": seed, "applied": _to_record(applied[0][1])}

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Apply the recorded blur with the albumentations transform's own `apply`."""
        image = _applier(params["kind"]).apply(frame.image, **_from_record(params["applied"]))
        return frame.with_image(np.ascontiguousarray(image))
