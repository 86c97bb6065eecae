"""A real OpenID Connect provider on loopback for the single sign-on tests: the npm package
``oidc-provider`` (tests/oidc/package.json, locked by tests/oidc/package-lock.json) run by
node with tests/oidc/provider.mjs.

``npm ci`` installs the locked packages once into a cache folder named after the lock file's
hash (``$XDG_CACHE_HOME`` or ``~/.cache``, ``trajudge-tests/``), so a fresh clone gets them from
``make test`` and the checkout is never written to. Where node or npm is missing the tests
skip, unless ``TRAJUDGE_REQUIRE_NODE=1`` (``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent / "oidc"
REQUIRE_ENV = "TRAJUDGE_REQUIRE_NODE"
START_TIMEOUT = 120.0  # seconds for node to load oidc-provider on a loaded 2-core machine


def unavailable(reason: str) -> None:
    """Skip (a clone on a machine without node) or, with TRAJUDGE_REQUIRE_NODE=1, fail."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"node is required ({REQUIRE_ENV}=1) but {reason}", pytrace=False)
    pytest.skip(f"the OpenID Connect provider cannot run: {reason}")


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trajudge-tests"


def provider_script() -> Path:
    """provider.mjs beside the locked node_modules (installed on first use), as
    ``provider-<hash of its text>.mjs`` so that node resolves ``oidc-provider`` from there."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        unavailable("node or npm is not on PATH")
    assert npm is not None
    lock = (HERE / "package-lock.json").read_bytes()
    digest = hashlib.sha256(lock + (HERE / "package.json").read_bytes()).hexdigest()[:16]
    root = _cache_root()
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"oidc-provider-{digest}"
    with (root / "oidc-provider.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # one npm ci at a time (pytest-xdist workers)
        if not (target / "node_modules" / "oidc-provider").is_dir():
            work = Path(tempfile.mkdtemp(prefix="oidc-provider-", dir=root))
            for name in ("package.json", "package-lock.json"):
                shutil.copy(HERE / name, work / name)
            done = subprocess.run(
                [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if done.returncode != 0:
                shutil.rmtree(work, ignore_errors=True)
                unavailable(f"npm ci failed: {done.stderr.strip()[-500:]}")
            shutil.rmtree(target, ignore_errors=True)
            work.rename(target)
        # The script is the checkout's, so it is put beside node_modules here. It was once
        # copied over one fixed name at every use: while one xdist worker's copy had truncated
        # the file, the other worker's node read it empty, ran nothing and exited 0 without a
        # word ("the OIDC provider failed", empty log; tests/labeling_app/
        # test_app_sso_browser.py once in CI, 33 of 40 starts beside a copying loop). Now a
        # file under a given name is written once, whole (a rename), and never rewritten.
        text = (HERE / "provider.mjs").read_bytes()
        script = target / f"provider-{hashlib.sha256(text).hexdigest()[:16]}.mjs"
        if not script.is_file():
            part = script.with_suffix(f".{os.getpid()}.part")
            part.write_bytes(text)
            part.replace(script)
    return script


@dataclass(frozen=True)
class OidcUser:
    login: str
    password: str
    email: str
    email_verified: bool
    name: str


@dataclass(frozen=True)
class OidcProvider:
    issuer: str
    client_id: str
    client_secret: str

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"


@contextmanager
def run_provider(
    script: Path,
    *,
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    users: list[OidcUser],
    log: Path,
) -> Iterator[OidcProvider]:
    """Run the provider until the block ends; its stderr goes to ``log``."""
    config: dict[str, Any] = {
        "client": {
            "client_id": client_id,
            "client_secret": client_secret,
            "redirect_uri": redirect_uri,
        },
        "users": [u.__dict__ for u in users],
    }
    env = {**os.environ, "OIDC_TEST_CONFIG": json.dumps(config)}
    with log.open("w") as err:
        proc = subprocess.Popen(
            ["node", str(script)],
            cwd=script.parent,
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        out = proc.stdout
        assert out is not None
        lines: queue.Queue[str] = queue.Queue()
        # the first line says where it serves; reading it in a thread keeps the wait bounded
        threading.Thread(target=lambda: lines.put(out.readline()), daemon=True).start()
        try:
            try:
                first = lines.get(timeout=START_TIMEOUT)
            except queue.Empty:
                raise AssertionError("the OIDC provider did not start") from None
            if not first.startswith("issuer "):
                raise AssertionError(
                    f"the OIDC provider failed (first line {first!r}, exit code {proc.poll()}): "
                    f"{log.read_text()[-2000:]}"
                )
            yield OidcProvider(first.split()[1], client_id, client_secret)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
