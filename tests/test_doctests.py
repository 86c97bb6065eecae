"""Every docstring example in the package runs: an example that drifts from the code fails.

The app's entry file is left out: importing it runs the Streamlit script.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import trajudge

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(trajudge.__path__, "trajudge.")
    if m.name != "trajudge.labeling_app.app"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, report=False
    )
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


def test_examples_exist() -> None:
    # Guards the collection itself: if the walk found no modules or no examples, nothing ran.
    attempted = 0
    for name in MODULES:
        finder = doctest.DocTestFinder()
        attempted += sum(len(t.examples) for t in finder.find(importlib.import_module(name)))
    assert attempted >= 150
