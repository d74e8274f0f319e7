#!/usr/bin/env bash
# Set up cairn in ./.venv, index the bundled sample notes and run example searches.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e .
export CAIRN_DB="${CAIRN_DB:-$PWD/.cairn/sample.db}"
echo "== cairn index sample   (index: $CAIRN_DB)"
.venv/bin/cairn index sample
for q in "compost greens browns" "worms eating garbage" "tag:garden todo:open" "全文検索"; do
  echo
  echo "== cairn search '$q'"
  .venv/bin/cairn search "$q" --limit 3
done
