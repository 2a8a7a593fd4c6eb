"""Start-up checks whose failure the operator must read in one line: busy port, unusable or locked data directory.

Kafka refuses to start on a data directory it cannot write, and so do we, but with one sentence naming the
directory, the config key and the cause (exit code 2, like configuration errors) instead of a traceback. The
checks run in an order that writes nothing before they pass: the listeners are bound first (no file is touched),
then the data directory is locked (`data_dir_lock`), and only then is storage opened. A listener on a wildcard
address is allowed, with one warning: nothing authenticates its clients.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from pathlib import Path

WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})  # noqa: S104 - recognised in order to warn, never bound by us


class StartupError(Exception):
    """The broker cannot start; the message is one line for the operator, naming the key and the cause."""


def os_cause(exc: OSError) -> str:
    """`[Errno 30] Read-only file system: '/x'` -> `Read-only file system: '/x'` (the errno number tells no one)."""
    cause = exc.strerror or str(exc)
    return f"{cause}: '{exc.filename}'" if exc.filename else cause


LOCK_FILE = ".lock"  # Kafka's name for the per-log-dir lock


class DataDirLock:
    """An exclusive `flock` on `<log.dir>/.lock`, held for the broker's lifetime (Kafka's FileLock).

    Two brokers on one directory would both load and write the same groups and segments; the second is refused
    instead. The holder's pid is written into the file so the refusal can name it. The lock dies with the process
    (kill -9 included), so a crashed broker never leaves a stale lock behind; the file itself stays, as Kafka's does.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def lock_data_dir(path: Path) -> DataDirLock:
    """Create `path` if needed, prove it writable and lock it, or raise StartupError (one line).

    Opening `.lock` for writing is the write probe (permission bits say nothing to root, and a read-only mount
    shows only on write). A directory locked by another broker is left exactly as it was: the existing file is
    opened without truncation and nothing is written until the lock is ours.
    """
    where = f"data directory {path} ('log.dirs')"
    if path.exists() and not path.is_dir():
        raise StartupError(f"{where} is not usable: it exists and is not a directory")
    lock_path = path / LOCK_FILE
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StartupError(f"{where} is not usable: {os_cause(exc)}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise StartupError(
            f"{where} is locked by another broker (pid {holder}, {lock_path}); "
            "stop it or set log.dirs to another directory"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return DataDirLock(lock_path, fd)


def bind_listener(listener: str, host: str, port: int) -> socket.socket:
    """Bind and listen on one listener's address now, before anything is written, or raise StartupError.

    `asyncio.start_server(sock=...)` serves it later. A host is bound in its own address family (the first address
    it resolves to); a wildcard host (empty) binds every address, dual-stack where the system has it.
    """
    try:
        if host:
            family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
            return socket.create_server(address, family=family, backlog=100)
        if socket.has_dualstack_ipv6():
            return socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=100)
        return socket.create_server(("", port), backlog=100)
    except OSError as exc:
        raise listen_error(listener, host, port, exc) from None


def listen_error(listener: str, host: str, port: int, exc: OSError) -> StartupError:
    """A listener that cannot bind: a busy port is one sentence that says how to choose another one."""
    if exc.errno == errno.EADDRINUSE:
        return StartupError(
            f"{host or '*'}:{port} is in use (listener {listener} in 'listeners'); "
            "set listeners=PLAINTEXT://127.0.0.1:<port> or PORT=<port> make run"
        )
    return StartupError(f"cannot listen on {listener} ('listeners'): {os_cause(exc)}")


def is_wildcard_host(host: str) -> bool:
    return host in WILDCARD_HOSTS
