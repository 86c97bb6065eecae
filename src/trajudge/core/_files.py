"""Atomic writes: a reader of the file sees the old content or the new, never a partial one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], None]) -> Path:
    """Write a file through ``write(tmp_path)`` then rename it into place.

    The temporary file sits in the same folder (so ``os.replace`` is atomic) and is removed if
    ``write`` fails, so a reader never sees a partial file.
    """
    target = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file, fsync, rename)."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    return atomic_write(path, write)
