#!/usr/bin/env bash
# Set up (idempotently) and render the embedded sample dataset with Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/itemshot demo --out "${1:-demo-out}"
