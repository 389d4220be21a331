#!/usr/bin/env bash
# Idempotent: a venv with lmms-eval for the harness round-trip tests, cached
# outside the checkout and keyed by its pins (scripts/lmms-eval-requirements.txt
# and this script). Prints the venv's bin folder.
set -euo pipefail
cd "$(dirname "$0")/.."

PINS=scripts/lmms-eval-requirements.txt
key=$(cat "$PINS" "$0" | sha256sum | cut -c1-16)
cache=${ITEMSHOT_TEST_CACHE:-$HOME/.cache/itemshot-test}
venv=$cache/lmms-eval-$key
done_stamp=$venv/.itemshot-complete

if [ ! -f "$done_stamp" ]; then
  mkdir -p "$cache"
  exec 9>"$cache/lmms-eval.lock"
  flock 9  # another test run may be building the same venv
  if [ ! -f "$done_stamp" ]; then
    echo "itemshot: installing lmms-eval into $venv (once; several minutes)" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    # torch first, so that the resolver keeps the pinned CPU build.
    "$venv/bin/pip" install -q "$(grep -E '^torch==' "$PINS")" >&2
    "$venv/bin/pip" install -q -r "$PINS" >&2
    # PyPI's torchvision is built against the CUDA torch: beside the CPU build it
    # fails at import ("operator torchvision::nms does not exist"), and
    # transformers imports it whenever it is installed. The `dummy` model the
    # tests run needs no torchvision.
    "$venv/bin/pip" uninstall -q -y torchvision >&2
    HF_HUB_OFFLINE=1 "$venv/bin/lmms-eval" --help >/dev/null
    touch "$done_stamp"
  fi
fi
echo "$venv/bin"
