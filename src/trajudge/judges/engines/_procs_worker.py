"""What runs in a worker process of :mod:`trajudge.judges.engines._procs`, and the frames the
driver and its workers exchange. See that module's docstring.

A frame is a header (payload length, kind, id: ``!IBQ``) and a payload. The driver sends
``ADD`` (id: the judge's index; payload: its pickled :class:`~trajudge.judges.engines._wire._Wire`),
``CALL`` (id: the call's number; payload: the pickled (judge index, cache key, messages,
parameters)), ``CANCEL`` (id: a call's number) and ``PERMIT`` (id: a rate ask's number;
payload: the seconds to wait, ``!d``). A worker sends ``RESULT`` (id: the call's number;
payload: the pickled :class:`~trajudge.judges.CallResult`), ``RAISED`` (the call raised:
payload, one line naming what) and ``RATE`` (id: its ask's number; payload: the judge's
index, ``!I``) before each attempt of a judge with an rpm. Closing the socket stops the
other side: a worker exits when its driver is gone, whatever killed it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import os
import pickle
import signal
import socket
import struct
from multiprocessing.connection import Connection
from typing import Any

from trajudge.judges.calls._provider import import_litellm, use_bundled_litellm_tables
from trajudge.judges.calls._result import CallResult
from trajudge.judges.engines._wire import _Wire, open_wire

HEADER = struct.Struct("!IBQ")
DELAY = struct.Struct("!d")
INDEX = struct.Struct("!I")
ADD, CALL, CANCEL, PERMIT, RESULT, RAISED, RATE = range(1, 8)


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, int, bytes]:
    """The next (kind, id, payload); raises ``asyncio.IncompleteReadError`` at the end."""
    size, kind, ident = HEADER.unpack(await reader.readexactly(HEADER.size))
    return kind, ident, await reader.readexactly(size) if size else b""


def write_frame(writer: asyncio.StreamWriter, kind: int, ident: int, payload: bytes = b"") -> None:
    """Queue one frame (never blocks: the transport buffers what the socket does not take)."""
    writer.writelines((HEADER.pack(len(payload), kind, ident), payload))


async def open_streams(fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over a copy of the socket ``fd`` (closing them leaves ``fd`` open)."""
    return await asyncio.open_unix_connection(sock=socket.socket(fileno=os.dup(fd)))


class _DriverRate:
    """A :class:`~trajudge.judges.calls._limits.Limiter` whose permits come from the driver,
    which spaces the starts of one judge for all its workers."""

    def __init__(self, worker: ProcessWorker, idx: int) -> None:
        self.worker = worker
        self.idx = idx

    async def wait(self) -> None:
        delay = await self.worker.permit(self.idx)
        if delay > 0:
            await asyncio.sleep(delay)


class ProcessWorker:
    """Calls judges' models for the driver, many calls at once on one event loop."""

    def __init__(self, wires: dict[int, _Wire]) -> None:
        self._judges: dict[int, tuple[Any, Any, Any]] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._permits: dict[int, asyncio.Future[float]] = {}
        self._asks = itertools.count()
        self._writer: asyncio.StreamWriter | None = None
        self._answered = False
        for idx, wire in wires.items():
            self.add(idx, wire)

    def add(self, idx: int, wire: _Wire) -> None:
        limiter = None if wire.rate is None else _DriverRate(self, idx)
        self._judges[idx] = open_wire(wire, limiter)

    async def call(
        self, idx: int, key: str, messages: list[dict[str, str]], params: dict[str, Any]
    ) -> CallResult:
        client, model, _ = self._judges[idx]
        result: CallResult = await client.call(key, messages, model, params)
        return result

    async def permit(self, idx: int) -> float:
        """Ask the driver for the judge's next start: the seconds to wait before it."""
        assert self._writer is not None
        ask = next(self._asks)
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._permits[ask] = done
        write_frame(self._writer, RATE, ask, INDEX.pack(idx))
        return await done

    async def _run(self, cid: int, payload: bytes) -> None:
        assert self._writer is not None
        try:
            idx, key, messages, params = pickle.loads(payload)
            answer = pickle.dumps(await self.call(idx, key, messages, params), protocol=5)
        except Exception as exc:  # a bug, not an LLM failure (those are in the result)
            text = " ".join(f"{type(exc).__name__}: {exc}".split())[:400]
            write_frame(self._writer, RAISED, cid, text.encode())
        else:
            write_frame(self._writer, RESULT, cid, answer)
            if not self._answered:
                # the first call imported what litellm loads on use (its HTTP and provider
                # modules: about as many objects again): out of the collector's scans too
                self._answered = True
                gc.freeze()
        finally:
            self._tasks.pop(cid, None)

    async def serve(self, fd: int) -> None:
        """Answer the driver on socket ``fd`` until it closes it."""
        reader, self._writer = await open_streams(fd)
        try:
            while True:
                try:
                    kind, ident, payload = await read_frame(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return  # the driver is gone or done
                if kind == CALL:
                    self._tasks[ident] = asyncio.ensure_future(self._run(ident, payload))
                elif kind == CANCEL:
                    task = self._tasks.pop(ident, None)
                    if task is not None:
                        task.cancel()
                elif kind == PERMIT:
                    waiting = self._permits.pop(ident, None)
                    if waiting is not None and not waiting.done():
                        waiting.set_result(DELAY.unpack(payload)[0])
                elif kind == ADD:  # a run begins: what earlier runs left, out of the scans
                    self.add(ident, pickle.loads(payload))
                    gc.freeze()
        finally:
            for task in list(self._tasks.values()):
                task.cancel()
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
            self._writer.close()


def worker_main(
    worker_class: type[ProcessWorker], conn: Connection, wires: dict[int, _Wire]
) -> None:
    """A worker process's entry point: its calls until the driver closes ``conn``."""
    # Ctrl-C reaches the whole process group: the driver stops its workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    use_bundled_litellm_tables()
    import_litellm()  # seconds: now, not during the first call
    worker = worker_class(wires)
    # litellm's ~600,000 objects, left out of the collector's full scans (0.2-0.4 s each),
    # as the driver's batch runner does around a batch
    gc.freeze()
    with contextlib.closing(conn):
        asyncio.run(worker.serve(conn.fileno()))
