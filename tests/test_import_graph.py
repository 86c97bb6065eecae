"""The layout's import rules, read from the source (tests/_imports.py): no import cycle between
files, an import inside a function only with its reason, and a rubric loads light."""

from __future__ import annotations

import ast
import subprocess
import sys

import _imports

# Typer registers the commands: the app imports the command modules, which import the app.
COMMAND_REGISTRATION = ["trajudge.cli", "trajudge.cli._app", "trajudge.cli._commands"]


def test_the_cycle_finder_sees_a_cycle_and_function_level_imports() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _imports.cycles(edges) == [["a", "b", "c"]]
    graph = _imports.build()
    # cli/_cmd_run.py imports the pipeline inside its command function
    assert "trajudge.pipeline" in graph.edges["trajudge.cli._cmd_run"]
    assert any(m == "trajudge.cli._cmd_run" for m, _, _ in graph.inner)
    # `from trajudge.judges import X` goes to the module the lazy table names for X
    assert "trajudge.judges.calls._spec" in graph.edges["trajudge.cli._cmd_judge"]


def test_no_import_cycle_between_files() -> None:
    found = _imports.cycles(_imports.build().edges)
    assert [c for c in found if c != COMMAND_REGISTRATION] == []


def test_every_import_inside_a_function_says_why() -> None:
    graph = _imports.build()
    silent = []
    for module, line, text in graph.inner:
        lines = graph.files[module].read_text(encoding="utf-8").splitlines()
        above = line - 2
        # the group's first import carries the reason; walk up over the group, parenthesised
        # imports included (``depth``: inside one whose closing line was passed)
        depth = 0
        while above >= 0:
            row = lines[above].strip()
            if not depth and not row.startswith(("from ", "import ", ")")):
                break
            depth += row.startswith(")") - row.endswith("(")
            above -= 1
        while above >= 0 and not lines[above].strip().startswith("#") and _continues(lines, above):
            above -= 1
        if above < 0 or not lines[above].strip().startswith("#"):
            silent.append(f"{module}:{line}: {text}")
    assert silent == []


def _continues(lines: list[str], i: int) -> bool:
    """Whether line ``i`` is inside a parenthesised import that ends below it."""
    text = lines[i].strip()
    return bool(text) and not text.endswith(":") and text.endswith(",")


def test_a_rubric_loads_without_pandas_litellm_or_the_statistics() -> None:
    code = (
        "import sys\n"
        "from trajudge.rubrics import load_rubric, response_schema, verdict_model\n"
        "r = load_rubric('trajectory_reasonableness')\n"
        "response_schema(verdict_model(r))\n"
        "heavy = [m for m in ('pandas', 'litellm', 'instructor', 'numpy', 'trajudge.calibration',"
        " 'trajudge.judges') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == ""


def test_the_graph_reads_every_module() -> None:
    graph = _imports.build()
    for module, path in graph.files.items():
        ast.parse(path.read_text(encoding="utf-8"))  # every file is read as source
        assert module.startswith("trajudge")
    assert "trajudge.rubrics._kinds" in graph.files


def test_the_rooms_import_each_other_in_one_order() -> None:
    """Between rooms (subpackages) too the imports form no cycle: each room stands on the ones
    below it (DESIGN.md lists the order)."""
    graph = _imports.build()
    rooms: dict[str, set[str]] = {}
    for source, targets in graph.edges.items():
        for target in targets:
            a, b = _room(source), _room(target)
            if a != b:
                rooms.setdefault(a, set()).add(b)
    assert _imports.cycles(rooms) == []
    # the base room stands on nothing of ours, and the model room only on it
    assert rooms.get("core", set()) == set()
    assert rooms.get("trajectories", set()) == {"core"}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]
