"""Reading YAML with one-line errors (config, rubrics, task specs and id maps share it), and
within limits: aliases, their expanded size and nesting depth are bounded
(:mod:`trajudge.trajectories._limits`), so an alias bomb or a 10,000-deep list is refused in
one line instead of taking gigabytes or the stack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trajudge.core import InputError, too_many_digits
from trajudge.trajectories._io import read_whole
from trajudge.trajectories._limits import NESTING, YAML_ALIASES, YAML_BYTES, YAML_NODES


class _TooBig(Exception):
    pass


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting the aliases it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0
        self.max_aliases = YAML_ALIASES.value

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > self.max_aliases:
                raise _TooBig(YAML_ALIASES.exceeded())
        return super().compose_node(parent, index)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        # int() refuses more digits than sys.get_int_max_str_digits() with a bare ValueError
        try:
            return int(super().construct_yaml_int(node))
        except ValueError:
            raise yaml.constructor.ConstructorError(
                None, None, too_many_digits(), node.start_mark
            ) from None


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a node graph whose expanded tree (every alias written out) is too big or too
    deep, or that refers to itself; linear in the distinct nodes (each is sized once)."""
    most, deepest = YAML_NODES.value, NESTING.value
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            on_path.discard(key)
            if size[key] > most:
                raise _TooBig(YAML_NODES.exceeded())
            if depth[key] > deepest:
                raise _TooBig(NESTING.exceeded())
            continue
        if key in size:
            continue
        if key in on_path:
            raise _TooBig("an alias refers to the node that contains it (a recursive YAML)")
        if len(on_path) >= deepest:
            raise _TooBig(NESTING.exceeded())
        on_path.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in size)


def load_yaml(text: str, src: str) -> Any:
    """Parse YAML ``text`` (from ``src``, named in errors) within the limits; a malformed or
    too big document raises :class:`InputError`."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    except _TooBig as exc:
        raise InputError(src, reason=str(exc)) from None
    except RecursionError:
        raise InputError(src, reason=NESTING.exceeded("deeper than Python can read")) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(src, record=where, reason=f"invalid YAML: {problem}") from None
    finally:
        loader.dispose()


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file; a missing, unreadable, non-UTF-8 or malformed file raises
    :class:`InputError` naming the file (and the line for YAML errors).

    >>> read_yaml("/no/such/file.yaml")
    Traceback (most recent call last):
    ...
    trajudge.core._errors.InputError: /no/such/file.yaml: file not found
    """
    p = Path(path)
    try:
        text = read_whole(p, YAML_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise InputError(str(p), reason="file not found") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(p), record=f"byte {exc.start}", reason="not UTF-8 text") from None
    except OSError as exc:
        raise InputError(str(p), reason=f"cannot read: {exc.strerror or exc}") from None
    return load_yaml(text, str(p))
