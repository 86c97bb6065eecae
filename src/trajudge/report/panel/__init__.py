"""The report's panel pages: judge drift (``trajudge drift``) and the sections on slices,
the Dawid-Skene jury and the alternative annotator test. A sub-room of the report."""
