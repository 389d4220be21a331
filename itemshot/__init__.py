"""itemshot: multiple-choice datasets as audited vision-only images and controlled sets.

The public API mirrors the command line:

- `load(path_or_rows, format=None, mapping=None) -> Items`
- `render(items, out, *, scene=…, capture=…, backend=…, seed=…, workers=…, verify=True)`
- `capture(image, preset, severity, seed)`
- `verify(out_or_image, items=None)`
- `audit(images_dir, items)`
- `sweep(design, out)`
- `export(out, to, dest)`
- `predict(out, model=…, endpoint=…)`
- `analyze(predictions, sets)`
- `plan(effect=0.10, discordant=0.30, power=0.80, alpha=0.05) -> Plan` (`.items`)

Results print as one line (`Items(42 items from data.jsonl)`), say how a run
ended by name (`RunResult.status` is a `RunStatus`, an `IntEnum` whose values
are the exit statuses), and give their tables as `rows` and `to_pandas()`.

The stages live in subpackages, each with a small public surface:
`itemshot.renderer` (items, presentations, backends), `itemshot.degradations`
(captures), `itemshot.verify` (audits), `itemshot.factorial` (designs,
exports, statistics), over `itemshot.fonts`, `itemshot.backgrounds` and
`itemshot.templates`.
"""

import sys as _sys
from inspect import signature as _signature
from types import ModuleType as _ModuleType

import itemshot.verify as _verify_stage  # cheap: the stage loads its parts on first use
from itemshot import api as _api
from itemshot.api import (
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_UNVERIFIED,
    EXIT_USAGE,
    Analysis,
    Items,
    RunResult,
    RunStatus,
    SourcesUnavailable,
    SweepRun,
    VerifyResult,
    analyze,
    audit,
    capture,
    estimate,
    export,
    load,
    plan,
    predict,
    render,
    sample_dataset,
    sweep,
)

__version__ = "0.1.0"


class _CallableStage(_ModuleType):
    """The `itemshot.verify` stage package, callable as the API's `verify`.

    `itemshot.verify` names both the stage package and the API call. Python
    binds a package to its parent's attribute when it is imported, so the
    name is the package; calling the package runs `itemshot.api.verify`, and
    `itemshot.verify.modes.regions`, `from itemshot.verify import …` keep working.
    """

    def __call__(self, *args: object, **kwargs: object) -> object:
        """Run `itemshot.api.verify`."""
        return _api.verify(*args, **kwargs)  # type: ignore[arg-type]


_verify_stage.__class__ = _CallableStage
_verify_stage.__signature__ = _signature(_api.verify)  # type: ignore[attr-defined]
verify = _sys.modules["itemshot.verify"]

__all__ = [
    "EXIT_OK",
    "EXIT_SOME_FAILED",
    "EXIT_UNVERIFIED",
    "EXIT_USAGE",
    "Analysis",
    "Items",
    "RunResult",
    "RunStatus",
    "SourcesUnavailable",
    "SweepRun",
    "VerifyResult",
    "__version__",
    "analyze",
    "audit",
    "capture",
    "estimate",
    "export",
    "load",
    "plan",
    "predict",
    "render",
    "sample_dataset",
    "sweep",
    "verify",
]
