"""A ``spawn`` multiprocessing context whose processes do not re-run the caller's script.

Python's ``spawn`` start method runs the parent's ``__main__`` file again in every child (as
``__mp_main__``) so that objects defined there can be unpickled. trajudge's worker processes
(the rules' ``workers``, the judges' ``--engine processes``) run trajudge's own functions, so
that re-run buys nothing and costs a great deal when the script is not import-safe: a script
without the ``if __name__ == "__main__":`` guard starts the pool again in each child, and a
Streamlit page (Streamlit runs it as ``__main__``) would draw itself in each worker and lose
it. :data:`SPAWN` starts each child with ``__main__`` set aside while the child's start-up
data is written, unless what the child is sent refers to ``__main__`` (a custom check defined
in the script itself): then the child needs the script, as with plain ``spawn``.
"""

from __future__ import annotations

import io
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import context, popen_spawn_posix, reduction
from typing import Any

# A module with neither __spec__ nor __file__: multiprocessing.spawn.get_preparation_data then
# records no main module to re-run in the child.
_NEUTRAL = types.ModuleType("__main__")
_swap = threading.Lock()


def refers_to_main(obj: object) -> bool:
    """Whether pickling ``obj`` names anything defined in ``__main__`` (a function, a class
    or an instance of one), which a child can only find by running the script again.

    >>> refers_to_main({"n": [1, 2.0, "x"]})
    False
    >>> refers_to_main(refers_to_main)
    False
    """
    found = False

    class _Scan(reduction.ForkingPickler):  # multiprocessing's reducers (queues, pipes)
        def reducer_override(self, o: Any) -> Any:
            nonlocal found
            owner = o if isinstance(o, (type, types.FunctionType)) else type(o)
            if getattr(owner, "__module__", None) == "__main__":
                found = True
            return NotImplemented

    try:
        _Scan(io.BytesIO()).dump(obj)
    except Exception:
        return True
    return found


@contextmanager
def _main_set_aside() -> Iterator[None]:
    # Other threads may look up sys.modules["__main__"] during this (a few milliseconds while
    # the start-up data is pickled): the lock keeps two starts from restoring out of order.
    with _swap:
        saved = sys.modules.get("__main__")
        sys.modules["__main__"] = _NEUTRAL
        try:
            yield
        finally:
            if saved is not None:
                sys.modules["__main__"] = saved


class _Popen(popen_spawn_posix.Popen):
    def _launch(self, process_obj: Any) -> None:
        # A queue or pipe pickles only while a child is being spawned, and registers its file
        # descriptor for the child as it does: scan as the real start will, then forget those.
        passed: list[int] = self._fds  # type: ignore[attr-defined]  # the stubs omit it
        fds = len(passed)
        context.set_spawning_popen(self)
        try:
            needs_main = refers_to_main(process_obj)
        finally:
            context.set_spawning_popen(None)
            del passed[fds:]
        if needs_main:
            super()._launch(process_obj)  # type: ignore[misc]  # private in the stubs
            return
        with _main_set_aside():
            super()._launch(process_obj)  # type: ignore[misc]  # private in the stubs


class _Process(context.SpawnProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _Popen:
        return _Popen(process_obj)


class _SpawnContext(context.SpawnContext):
    Process = _Process


SPAWN: context.SpawnContext = _SpawnContext()
"""Use as ``mp_context=SPAWN`` or ``SPAWN.Process(...)``: a ``spawn`` context whose children
skip the parent's ``__main__`` when nothing sent to them needs it."""
