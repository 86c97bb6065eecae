#!/usr/bin/env bash
# `make demo`: the whole loop on the τ-bench airline example with the embedded local judge
# (no API key, no network). A second run is served from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True
.venv/bin/trajudge run examples/tau_airline/trajudge.yaml
echo
echo "HTML report: $(pwd)/trajudge-report/tau_airline/report.html"
echo "Run 'make demo' again: every judgment is served from the cache in seconds."
