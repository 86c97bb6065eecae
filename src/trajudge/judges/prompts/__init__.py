"""Judges, layer 1: prompts. A trajectory rendered as delimited, neutralised data; the rubric's
template around it, fitted to the token budget; rubrics with examples; the input keys (what a
prompt is a function of, so a re-run finds its answers without rendering)."""
