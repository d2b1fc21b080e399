"""Reading and writing a user's files. Reading: UTF-8 (or a clear error naming the
line and byte that is not); writing: only when asked, atomically, never half."""

from __future__ import annotations

import codecs
import os
import tempfile
from pathlib import Path

from kspread.errors import CaseError

# Byte order marks of the encodings a file may be saved in that are not UTF-8 (UTF-32's
# first: UTF-32-LE's starts with UTF-16-LE's).
_OTHER_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
               (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def decode_text(data: bytes, path: str) -> str:
    """A file's bytes as text: UTF-8, a leading byte order mark dropped (YAML and JSON
    text may start with one; lines and offsets stay those of the file). A file in UTF-16
    or UTF-32 (a byte order mark says so: what PowerShell writes) or with a byte that is
    not UTF-8 is a CaseError naming the line and the byte."""
    for bom, name in _OTHER_BOMS:
        if data.startswith(bom):
            raise CaseError(f"cannot read the file: {name}: save as UTF-8 (the file starts with a {name} byte order "
                            "mark; kspread reads UTF-8)", file=path, line=1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise CaseError(f"cannot read the file: byte 0x{data[e.start]:02x} (column {column} of this line, byte "
                        f"{e.start} of the file) is not UTF-8 ({e.reason}): save it as UTF-8",
                        file=path, line=line) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str) -> str:
    """A case file's text (``decode_text``); a CaseError when it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise CaseError(f"cannot read the file: {e}", file=path) from None
    return decode_text(data, path)


def sniff_text(data: bytes) -> str:
    """Text to search for what a file holds (whether it mentions a case): decoded as its
    byte order mark says, UTF-8 otherwise, bytes that are not replaced; so a file that
    ``read_text`` refuses is still recognized, and refused with its reason."""
    for bom, name in _OTHER_BOMS:
        if data.startswith(bom):
            return data.decode(name, errors="replace")  # the codec reads the mark itself
    return data.decode("utf-8", errors="replace")


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory, fsync
    and an atomic rename, keeping the file's permissions. A symlink stays a symlink:
    its target is what gets replaced. Line endings are written as given."""
    real = os.path.realpath(path)
    d = os.path.dirname(real)
    mode = os.stat(real).st_mode & 0o7777 if os.path.exists(real) else 0o644
    fd, tmp = tempfile.mkstemp(prefix=".kspread-", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:  # make the rename itself durable
        dfd = os.open(d, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dfd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(dfd)
