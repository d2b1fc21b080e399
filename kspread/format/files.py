"""A user's files: read only when they are regular files (never a FIFO that would
block, nor a device that never ends) and as UTF-8 (or a clear error naming the line and
byte that is not); written only when asked, atomically, never half, one writer at a time."""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import socket
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO

from kspread.errors import CaseError, PathT

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock
    fcntl = None  # type: ignore[assignment]


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


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """The regular file ``path`` (symlinks followed) opened for reading bytes. The file is
    opened without blocking and checked on the open descriptor, so a FIFO (which would
    wait for a writer forever) or a device such as /dev/zero (which never ends) raises
    NotRegularFile instead; other failures are the OSError of ``open``."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotRegularFile(os.fspath(path), kind)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path`` (``open_regular``)."""
    with open_regular(path) as f:
        return f.read()


def decode_utf8(data: bytes, file: str, what: str) -> str:
    """``data`` decoded as UTF-8; a CaseError naming ``file``, the line and the first
    byte that is not UTF-8, never the text around it."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise CaseError(f"{what} is not UTF-8 text: byte 0x{data[e.start]:02x} on this line cannot be decoded",
                        file=file, line=line) from None


def _host_tag() -> str:
    """Eight hex digits of this machine's name: a process id means something on its own
    machine (its own PID namespace) only."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


# A temporary file of write_atomic: ".kspread-<host tag>-<pid>-<random>.tmp". A killed
# writer leaves one; the next write into that directory removes those whose process,
# on this machine, is gone. (Older kspread versions wrote ".kspread-<random>.tmp",
# which name no process: they are left alone.)
_TMP = re.compile(r"\A\.kspread-([0-9a-f]{8})-([0-9]+)-[a-z0-9_]+\.tmp\Z")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: another user's process
        return True
    return True


def remove_stale_temporaries(directory: str) -> list[str]:
    """Remove the temporary files that killed kspread writes left in ``directory``
    (this machine's, of processes that no longer run); the names removed."""
    host = _host_tag()
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        m = _TMP.match(entry.name)
        if m is None or m.group(1) != host or _alive(int(m.group(2))):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:  # gone meanwhile, or not ours to remove
            pass
    return removed


@contextmanager
def locked(path: str) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (a symlink's target) while it is read,
    checked and rewritten, so two kspread processes updating one file take turns.

    The lock is an advisory ``flock`` of the file itself, so nothing is left beside it.
    write_atomic replaces the file by a new one (a rename): a writer that waited on the
    old file finds that it is no longer the one at ``path`` and locks the new one.
    Raises OSError when the file cannot be opened (NotRegularFile for a FIFO, a device,
    ...). Where the file system has no ``flock`` (some network file systems, Windows)
    the write goes on unlocked."""
    real = os.path.realpath(path)
    while True:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block
        try:
            kind = _kind(os.fstat(fd).st_mode)
            if kind is not None:
                raise NotRegularFile(path, kind)
            if fcntl is None:
                break
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as e:
                if e.errno in (errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                    break  # no flock here
                raise
            held = os.fstat(fd)
            try:
                now = os.stat(real)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # replaced (or removed) while we waited: lock the file now there
    try:
        yield
    finally:
        os.close(fd)

def inside_trees(path: str | os.PathLike[str], roots: Sequence[str]) -> bool:
    """Whether ``path``, symlinks followed, lies inside one of the directory trees
    ``roots`` (each resolved already: ``tested_trees``)."""
    real = os.path.realpath(path)
    return any(real == t or real.startswith(t.rstrip(os.sep) + os.sep) for t in roots)


def file_in_trees(given: str, base_dir: str | None, roots: Sequence[str] | None, at: PathT, what: str,
                  named: str, short: str, err: Callable[[str, PathT, Any], CaseError] | None = None) -> str:
    """A file that a case (or a file it names) names: ``given`` relative to ``base_dir``
    (the directory of the file that names it), which must resolve, symlinks followed,
    inside one of ``roots`` (the directory trees being tested; without roots,
    ``base_dir`` itself) and be a regular file. An absolute path is refused: a case under
    review must not make a run read a file outside the tree it tests (a token,
    ``~/.git-credentials``). ``what`` names the file in errors ("KubeSchedulerConfiguration"),
    ``named`` says how it is named ("a configuration file is named relative to the case
    file"), ``short`` what a case names ("configuration"); ``err`` makes the error (default: a CaseError at ``at``)."""

    def fail(message: str) -> CaseError:
        return err(message, at, given) if err is not None else CaseError(message, at, value=given)

    if not given.isprintable():
        raise fail("the path holds a character that is not printable (a NUL, a line break, ...)")
    if os.path.isabs(given):
        raise fail(f"an absolute path is refused: {named} and lies inside the directory tree being tested")
    base = base_dir if base_dir is not None else "."
    real = os.path.realpath(os.path.join(base, given))
    trees = [os.path.realpath(r) for r in (roots if roots else [base])]
    if not inside_trees(real, trees):
        raise fail(f"the file lies outside the directory trees being tested ({', '.join(trees)}), symlinks "
                   f"followed: a case names a {short} inside the current directory or a path given to kspread "
                   "(pytest: its rootdir or a path given)")
    if not os.path.exists(real):
        raise fail(f"no such {what} file: {os.path.join(base, given)}")
    kind = special_kind(real)
    if kind is not None:
        raise fail(f"not a regular file ({kind}): a {what} is read from a regular file")
    return os.path.join(base, given)


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
        data = read_regular(path)
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
    and an atomic rename, keeping the file's permissions, and its owner and group where
    this process may give them (root may). A symlink stays a symlink: its target is
    what gets replaced. Line endings are written as given. A path that is not a regular
    file (a device, a FIFO, a directory) raises NotRegularFile; a read-only file is not
    replaced (PermissionError), as a read-only directory is not written. Temporary files
    that killed writers left in the directory are removed first."""
    real = os.path.realpath(path)
    d = os.path.dirname(real)
    kind = special_kind(real)
    if kind is not None:  # renaming over /dev/null or a FIFO would replace it with a file
        raise NotRegularFile(path, kind)
    st = os.stat(real) if os.path.exists(real) else None
    if st is not None:
        mode = st.st_mode & 0o7777
        # the rename needs only the directory writable: the file's own mode is what says no
        if not mode & 0o222 or not os.access(real, os.W_OK):
            raise PermissionError(f"the file is read-only (mode {mode:04o}); not replaced")
    else:
        mode = 0o644
    remove_stale_temporaries(d)
    fd, tmp = tempfile.mkstemp(prefix=f".kspread-{_host_tag()}-{os.getpid()}-", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if st is not None and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            # a user's case file rewritten by root (in a container) stays the user's; only
            # root gives a file away (a group of one's own is kept by anyone)
            with suppress(OSError):
                os.chown(tmp, st.st_uid, st.st_gid)
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


def tested_trees(paths: list[str], base: str | None = None) -> tuple[str, ...]:
    """The directory trees being tested, into which a case's ``profile.config`` must
    resolve: ``base`` (the current directory; pytest: its rootdir) and each path given (a
    file: its directory), symlinks resolved."""
    out = [os.path.realpath(base if base is not None else os.getcwd())]
    for p in paths:
        real = os.path.realpath(p)
        out.append(real if os.path.isdir(real) else os.path.dirname(real))
    return tuple(dict.fromkeys(out))
