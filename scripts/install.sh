#!/usr/bin/env bash
# Idempotent set-up of a fresh Debian/Ubuntu machine: system packages via apt,
# Python packages into ./.venv. Safe to run any number of times.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  chromium
  tesseract-ocr tesseract-ocr-eng tesseract-ocr-jpn
  libjs-katex fontconfig
  fonts-dejavu-core fonts-liberation2 fonts-noto-core fonts-texgyre
  fonts-comic-neue fonts-dancingscript fonts-nanum-extra fonts-jetbrains-mono
  fonts-noto-cjk fonts-noto-cjk-extra fonts-klee fonts-seto
  fonts-motoya-l-maruberi fonts-mplus fonts-ipaexfont
  python3-venv
  # tesserocr (tesseract in-process) is built against the tesseract above, so both read alike.
  libtesseract-dev libleptonica-dev pkg-config g++ python3-dev
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "itemshot: installing system packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# Re-install only when the dependency list changed since the last install.
stamp=.venv/.itemshot-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  PIP_NO_BINARY=tesserocr .venv/bin/python -m pip install -q -e ".[test,ray]"
  echo "$want" > "$stamp"
fi
