#!/usr/bin/env bash
# Make (once) a venv with Augraphy 8.2.6 outside the checkout and print its python.
# The capture throughput benchmark measures Augraphy's nearest pipelines beside ours:
#   python benchmarks/capture_throughput.py --augraphy-python "$(bash benchmarks/augraphy_venv.sh)"
set -euo pipefail
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/itemshot/augraphy-8.2.6"
if ! "$VENV/bin/python" -c "import augraphy" >/dev/null 2>&1; then
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q "augraphy==8.2.6" >&2
fi
echo "$VENV/bin/python"
