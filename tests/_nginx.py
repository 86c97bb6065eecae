"""A real nginx on loopback as the TLS reverse proxy in front of the labeling app, and a TCP
relay that reaches it from another loopback source address.

nginx (Debian's ``nginx``, installed by ``.ci/run``) runs in the foreground as the test's own
process, with its configuration, pid file, logs and temporary folders in a folder of the
test's: no port below 1024, nothing under /etc or /var. Its ``server`` block is the one the
README shows (``server_block``), with the test's port, certificate and app port put in. The
certificate is self-signed for the public name, made here with ``cryptography``.

The relay exists because every loopback connection a browser opens comes from 127.0.0.1,
which the app reports as "loopback": connecting to nginx from 127.0.0.5 gives the client an
address of its own that only X-Forwarded-For can carry to the app.
"""

from __future__ import annotations

import datetime
import os
import pwd
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

START_TIMEOUT = 60.0  # seconds for nginx to listen on a loaded machine


def self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    """A key and a self-signed certificate for ``name`` (a day long) in ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


def server_block(readme: str) -> str:
    """The README's nginx ``server`` block (the only ```nginx block)."""
    found = re.findall(r"```nginx\n(.*?)```", readme, flags=re.S)
    assert len(found) == 1, "the README has one nginx block"
    return str(found[0])


def _for_test(block: str, *, port: int, cert: Path, key: Path, app_port: int) -> str:
    """The README's block listening on a loopback port with the test's certificate, in front
    of the test's app: each value replaced must be there to be replaced."""
    out = block
    for pattern, value in (
        (r"listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
        (r"ssl_certificate +\S+;", f"ssl_certificate {cert};"),
        (r"ssl_certificate_key +\S+;", f"ssl_certificate_key {key};"),
        (r"http://127\.0\.0\.1:8501;", f"http://127.0.0.1:{app_port};"),
    ):
        out, n = re.subn(pattern, value, out)
        assert n == 1, f"the README's nginx block has no {pattern!r}"
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(folder: Path, server: str) -> str:
    temp = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # run as root (a CI container), the workers would drop to "nobody", who may not enter
    # the test's temporary folder: they keep the user the test runs as
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else ""
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} info;\nevents {{ worker_connections 256; }}\n"
        f"http {{\n    access_log {folder / 'access.log'};\n{temp}\n{server}\n}}\n"
    )


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def run_nginx(folder: Path, block: str, *, name: str, app_port: int) -> Iterator[int]:
    """nginx with the README's ``block`` serving https for ``name`` in front of the app on
    ``app_port``, until the block ends; yields its port."""
    exe = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if exe is None:
        if os.environ.get("TRAJUDGE_REQUIRE_NGINX") == "1":
            pytest.fail("nginx is required (TRAJUDGE_REQUIRE_NGINX=1) but not installed")
        pytest.skip("nginx is not installed (apt-get install nginx)")
    cert, key = self_signed(folder, name)
    # The port is chosen, then nginx binds it: another process may take it in between (a
    # named race between choosing and binding; nginx cannot listen on port 0 and say which
    # port it got). Only "Address already in use" is retried, with a new port.
    for _attempt in range(5):
        port = _free_port()
        server = _for_test(block, port=port, cert=cert, key=key, app_port=app_port)
        conf = folder / "nginx.conf"
        conf.write_text(_config(folder, server))
        log = folder / "error.log"
        log.write_text("")
        proc = subprocess.Popen(
            [exe, "-p", str(folder), "-c", str(conf), "-e", str(log)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        end = time.monotonic() + START_TIMEOUT
        while proc.poll() is None and not _listening(port) and time.monotonic() < end:
            time.sleep(0.1)
        if proc.poll() is None and _listening(port):
            break
        _stop(proc)
        text = log.read_text()
        if "Address already in use" not in text:
            raise AssertionError(f"nginx did not start (exit code {proc.poll()}): {text[-2000:]}")
    else:
        raise AssertionError("nginx found no free port in 5 tries")
    try:
        yield port
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()  # nginx's fast shutdown
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Relay:
    """``with Relay(port, source) as r:`` forwards connections to ``r.port`` (127.0.0.1) on
    to 127.0.0.1:``port``, opened from the address ``source``: byte for byte, TLS and
    WebSocket included."""

    def __init__(self, target_port: int, source: str) -> None:
        self.target_port = target_port
        self.source = source
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Relay:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()
        with self._lock:
            for s in self._open:
                with suppress(OSError):
                    s.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed
            upstream = socket.create_connection(
                ("127.0.0.1", self.target_port), source_address=(self.source, 0)
            )
            with self._lock:
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with suppress(OSError):
                dst.shutdown(socket.SHUT_WR)
