#!/usr/bin/env bash
# Set up (idempotently) and run the whole test suite: real Chromium, real tesseract.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export NO_ALBUMENTATIONS_UPDATE=1
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python scripts/lint_imports.py  # the layer contracts in pyproject.toml
exec .venv/bin/python -m pytest -q "$@"
