"""The eval set's plain defaults, in a module that imports nothing (the CLI reads them to
build its options, before any command runs)."""

DEV_SHARE = 0.3
"""Share of tasks in the dev split (the rest is holdout)."""

SALT = "trajudge"
"""Salt of the task-id hash that assigns each task to dev or holdout."""
