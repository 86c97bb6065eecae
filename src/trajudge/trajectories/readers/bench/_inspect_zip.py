"""An Inspect ``.eval`` zip checked before ``inspect_ai`` reads it.

``inspect_ai`` decompresses each member whole into memory (``zlib.decompress``, zstandard's
``read()``) without bounding the output, so 300 KB of deflated spaces became 3.3 GB. Here each
member's declared size and compression ratio are checked first (``TRAJUDGE_MAX_ZIP_*``), then
the member is decompressed once through a bounded stream and only counted: that catches a zip
whose directory declares less than its data holds, which ``inspect_ai`` would expand all the
same.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from typing import IO, BinaryIO, cast

from trajudge.core import InputError
from trajudge.trajectories._limits import ZIP_MEMBER, ZIP_RATIO, ZIP_TOTAL

_PIECE = 1 << 20  # decompressed bytes produced at a time
_RATIO_FLOOR = 1 << 20  # a small member may compress well without being a risk
_STORED, _DEFLATED, _ZSTD = 0, 8, 93


class _Slice:
    """The ``size`` bytes of ``fh`` from where it stands: one member's compressed data."""

    def __init__(self, fh: BinaryIO, size: int) -> None:
        self._fh = fh
        self._left = size

    def read(self, n: int = -1) -> bytes:
        n = self._left if n < 0 else min(n, self._left)
        data = self._fh.read(n)
        self._left -= len(data)
        return data


def _data(fh: BinaryIO, info: zipfile.ZipInfo) -> _Slice | None:
    """The member's compressed data, found through its local header as inspect_ai finds it."""
    fh.seek(info.header_offset)
    head = fh.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        return None  # inspect_ai will say the zip is broken
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    fh.seek(info.header_offset + 30 + name_len + extra_len)
    return _Slice(fh, info.compress_size)


def _expanded(fh: BinaryIO, info: zipfile.ZipInfo, bound: int) -> int | None:
    """How many bytes the member decompresses to, counted up to ``bound`` + 1 at most (None
    for a method inspect_ai cannot read either)."""
    data = _data(fh, info)
    if data is None or info.compress_type not in (_STORED, _DEFLATED, _ZSTD):
        return None
    if info.compress_type == _STORED:
        return info.compress_size
    count = 0
    if info.compress_type == _DEFLATED:
        inflate = zlib.decompressobj(-15)
        while count <= bound and (chunk := inflate.unconsumed_tail or data.read(1 << 16)):
            count += len(inflate.decompress(chunk, _PIECE))
        return count if count > bound else count + len(inflate.flush())  # at most a window
    import zstandard  # a dependency of inspect_ai, which wrote the zstd member

    source = cast("IO[bytes]", data)  # zstandard needs only read()
    reader = zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True)
    while count <= bound and (piece := reader.read(_PIECE)):
        count += len(piece)
    return count


def check_eval_zip(path: Path) -> None:
    """Raise :class:`InputError` naming the member when the zip expands past a limit."""
    file = str(path)
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError):
        return  # not a zip: inspect_ai names what is wrong
    most, total_most, ratio = ZIP_MEMBER.value, ZIP_TOTAL.value, ZIP_RATIO.value
    total = 0
    with open(path, "rb") as fh:
        for info in infos:
            name, size = info.filename, info.file_size
            if size > most:
                raise InputError(
                    file, record=name, reason=ZIP_MEMBER.exceeded(f"declares {size:,}")
                )
            total += size
            if total > total_most:
                raise InputError(file, record=name, reason=ZIP_TOTAL.exceeded(f"{total:,} so far"))
            if size > _RATIO_FLOOR and size > ratio * max(info.compress_size, 1):
                found = f"{size:,} from {info.compress_size:,} bytes"
                raise InputError(file, record=name, reason=ZIP_RATIO.exceeded(found))
            actual = _expanded(fh, info, size)
            if actual is not None and actual > size:
                reason = f"decompresses to more than the {size:,} bytes it declares"
                raise InputError(file, record=name, reason=reason)
