#!/usr/bin/env bash
# Build the pinned neural-tangents oracle environment (.venv-nt) and write tests/fixtures/*.npz.
#
# neural-tangents 0.6.5 (its last release) imports only with jax/jaxlib 0.5.3 and a real
# tensorflow installed (it imports tf2jax -> tensorflow at import time). tensorflow 2.18.1 is the
# pin: it installs on Python 3.11 and accepts numpy 2.0 and ml_dtypes 0.6 that jax 0.5.3 uses.
# This venv is separate from the project's .venv (jax 0.10) and is used only by this script.
# Run from the repository root: `make nt-fixtures` or `bash scripts/make_nt_fixtures.sh`.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
VENV=.venv-nt
PINS=(
  jax==0.5.3
  jaxlib==0.5.3
  neural-tangents==0.6.5
  tensorflow==2.18.1
  numpy==2.0.2
  ml_dtypes==0.6.0
)

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
# The stamp records the pins, so changing PINS reinstalls; otherwise the venv is reused as is.
STAMP="$VENV/.installed"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "${PINS[*]}" ]; then
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet "${PINS[@]}"
  echo "${PINS[*]}" > "$STAMP"
fi

if [ "${1:-}" = "--env-only" ]; then  # `make bench-nt` only needs the environment
  exit 0
fi
TF_CPP_MIN_LOG_LEVEL=3 JAX_PLATFORMS=cpu "$VENV/bin/python" scripts/make_nt_fixtures.py
