#!/usr/bin/env bash
# Set up (idempotently) and run the whole test suite: real Chromium, real tesseract,
# real lmms-eval.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# The real lmms-eval for the export round trips, in a venv cached outside the checkout.
if [ -z "${ITEMSHOT_LMMS_EVAL_PYTHON:-}" ]; then
  ITEMSHOT_LMMS_EVAL_PYTHON="$(bash scripts/lmms_eval_env.sh)/python"
  export ITEMSHOT_LMMS_EVAL_PYTHON
fi
export NO_ALBUMENTATIONS_UPDATE=1
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python scripts/lint_imports.py  # the layer contracts in pyproject.toml
exec .venv/bin/python -m pytest -q "$@"
