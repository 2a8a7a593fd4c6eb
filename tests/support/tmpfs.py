"""A small tmpfs mounted for one test: a real "No space left on device" without filling the machine's disk.

Mounting needs root (CI runs as root). Where mounting is impossible (a developer's laptop without root, a container
without CAP_SYS_ADMIN) the test is skipped with that reason: disk-full behaviour cannot be shown without a small
file system, and faking ENOSPC in Python would not exercise the real write paths.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_tmpfs(size_bytes: int) -> Iterator[Path]:
    """A fresh tmpfs of ``size_bytes`` mounted on a temporary directory; unmounted (and removed) afterwards."""
    mount_point = Path(tempfile.mkdtemp(prefix="gb-tmpfs-"))
    if os.geteuid() != 0:
        mount_point.rmdir()
        pytest.skip("disk-full tests mount a small tmpfs, which needs root (CI runs as root)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_bytes}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        mount_point.rmdir()
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}); disk-full tests need one")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
        mount_point.rmdir()


def fill(directory: Path, *, leave_bytes: int = 0) -> Path:
    """Fill the file system holding ``directory`` until at most ``leave_bytes`` are free; returns the filler file.

    Delete the returned file to free the space again.
    """
    filler = directory / "filler.bin"
    chunk = b"\0" * 65536
    with filler.open("ab") as out:
        while True:
            free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
            if free <= leave_bytes:
                break
            try:
                out.write(chunk[: max(1, min(len(chunk), free - leave_bytes))])
                out.flush()
            except OSError:
                break
    return filler
