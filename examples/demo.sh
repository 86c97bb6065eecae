#!/usr/bin/env bash
# `make demo`: the whole loop on the τ-bench airline example with the embedded local judge
# (no API key, no network). A second run is served from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True
.venv/bin/trajudge run examples/tau_airline/trajudge.yaml
echo
# Align the judge with the reference labels (no model call): fit on the dev tasks, every
# figure on the holdout tasks. Five tasks are few: half of them go to dev (salt "demo" puts
# tasks 1 and 13 there, 3 passes in 8 runs; 0, 37 and 38 are the holdout), so expect wide
# intervals. Two dev tasks are too few to choose a method by cross-validation (it takes 3), so
# align prints why and exits 1 (refused by the data, nothing saved), which the demo shows and
# goes past; with more labelled tasks it saves the method dev chooses.
status=0
.venv/bin/trajudge align tau_airline_demo --config examples/tau_airline/trajudge.yaml \
  --judge gemma-270m --method threshold,calibrate,stack --dev-share 0.5 --salt demo || status=$?
if [ "$status" -gt 1 ]; then exit "$status"; fi
echo
echo "HTML report: $(pwd)/trajudge-report/tau_airline/report.html"
echo "Run 'make demo' again: every judgment is served from the cache in seconds."
echo
echo "What next (the README's tour starts here):"
echo "  - label runs yourself, blind to the judge:"
echo "      .venv/bin/trajudge label --dataset tau_airline_demo --rubric trajectory_reasonableness_reference"
echo "  - judge with a real model: in examples/tau_airline/trajudge.yaml, uncomment the"
echo "    gpt-4o-mini judge; the two lines that make it a hosted judge are"
echo "      model: openai/gpt-4o-mini"
echo "      api_key_env: OPENAI_API_KEY"
echo "    (the key stays in your environment), then run 'make demo' again."
