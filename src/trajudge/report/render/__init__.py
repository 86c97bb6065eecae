"""The renderers: HTML and JSON written atomically into a folder (_render), the terminal and
Markdown (_text), the plots as PNG bytes (_figures), report.json's tables for notebooks
(_frames). Public names are exported by :mod:`trajudge.report`."""
