"""Start-up checks whose failure the operator must read in one line: unusable data directory, busy port.

Kafka refuses to start on a data directory it cannot write, and so do we, but with one sentence naming the
directory, the config key and the cause (exit code 2, like configuration errors) instead of a traceback. A
listener on a wildcard address is allowed, with one warning: nothing authenticates its clients.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})  # noqa: S104 - recognised in order to warn, never bound by us


class StartupError(Exception):
    """The broker cannot start; the message is one line for the operator, naming the key and the cause."""


def os_cause(exc: OSError) -> str:
    """`[Errno 30] Read-only file system: '/x'` -> `Read-only file system: '/x'` (the errno number tells no one)."""
    cause = exc.strerror or str(exc)
    return f"{cause}: '{exc.filename}'" if exc.filename else cause


def check_data_dir(path: Path) -> None:
    """Create `path` if needed and prove it is a directory this process can write, or raise StartupError.

    Writing a probe file is the only reliable test: permission bits say nothing to root, and a read-only mount
    shows only on write. The probe is removed at once.
    """
    where = f"data directory {path} ('log.dirs')"
    if path.exists() and not path.is_dir():
        raise StartupError(f"{where} is not usable: it exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".write-probe-{os.getpid()}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.close(fd)
        probe.unlink()
    except OSError as exc:
        raise StartupError(f"{where} is not usable: {os_cause(exc)}") from None


def listen_error(listener: str, exc: OSError) -> StartupError:
    """A listener that cannot bind: a busy port is named as such (`Address already in use`), not as a traceback."""
    cause = "address already in use" if exc.errno == errno.EADDRINUSE else os_cause(exc)
    return StartupError(f"cannot listen on {listener} ('listeners'): {cause}")


def is_wildcard_host(host: str) -> bool:
    return host in WILDCARD_HOSTS
