"""A user's files: read only when they are regular files (never a FIFO that would
block, nor a device that never ends); written only when asked, atomically, never half."""

from __future__ import annotations

import os
import stat
import tempfile

from kspread.errors import CaseError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it is not a regular file, symlinks followed ("a FIFO", "a
    character device", "a directory", ...); None for a regular file or a path that does
    not exist (opening it then says so)."""
    try:
        return _kind(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None


class NotRegularFile(OSError):
    """``read_regular`` was given a FIFO, a device, a directory, ..."""

    def __init__(self, path: str, kind: str) -> None:
        message = f"not a regular file ({kind})"
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.strerror = message
        self.filename = path

    def __str__(self) -> str:
        return self.message


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path`` (symlinks followed). The file is opened
    without blocking and checked on the open descriptor, so a FIFO (which would wait for
    a writer forever) or a device such as /dev/zero (which never ends) raises
    NotRegularFile instead; other failures are the OSError of ``open``."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotRegularFile(os.fspath(path), kind)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read()
    finally:
        if fd >= 0:
            os.close(fd)


def decode_utf8(data: bytes, file: str, what: str) -> str:
    """``data`` decoded as UTF-8; a CaseError naming ``file``, the line and the first
    byte that is not UTF-8, never the text around it."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise CaseError(f"{what} is not UTF-8 text: byte 0x{data[e.start]:02x} on this line cannot be decoded",
                        file=file, line=line) from None


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory, fsync
    and an atomic rename, keeping the file's permissions. A symlink stays a symlink:
    its target is what gets replaced. Line endings are written as given. A path that is
    not a regular file (a device, a FIFO, a directory) raises NotRegularFile."""
    real = os.path.realpath(path)
    d = os.path.dirname(real)
    kind = special_kind(real)
    if kind is not None:  # renaming over /dev/null or a FIFO would replace it with a file
        raise NotRegularFile(path, kind)
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
