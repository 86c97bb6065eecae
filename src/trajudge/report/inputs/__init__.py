"""What the report reads: the store's trajectories, judgments and labels as plain tables
(_sources), the categorical rubrics' tables (_categorical_inputs), judges and labels matched by
rubric (_rubrics), labels as pass/fail (_labels), an aligned judge's calls (_aligned_rows).
Public names are exported by :mod:`trajudge.report`."""
