"""A broker that cannot start says why in one line naming the directory or address and the cause, exit code 2.

Before this, a read-only or unusable data directory ended the process with a raw traceback.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.broker_process import run_server
from tests.support.tmpfs import small_tmpfs


def start_server(*overrides: str) -> subprocess.CompletedProcess[str]:
    return run_server("listeners=PLAINTEXT://127.0.0.1:0", "offsets.topic.num.partitions=2", *overrides)


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert all('"level": "info"' in log_line for log_line in done.stdout.splitlines())  # nothing else went wrong
    [line] = done.stderr.splitlines()
    return line


def test_a_file_where_the_data_dir_should_be(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_text("not a directory")
    line = one_error_line(start_server(f"log.dirs={data}"))
    assert str(data) in line and "'log.dirs'" in line and "not a directory" in line


def test_a_data_dir_below_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    data = tmp_path / "file" / "data"
    line = one_error_line(start_server(f"log.dirs={data}"))
    assert str(data) in line and "Not a directory" in line


def test_a_read_only_data_dir(tmp_path: Path) -> None:
    with small_tmpfs(1 << 20) as mount:
        remount = subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True, text=True, check=False)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount the tmpfs read-only ({remount.stderr.strip()})")
        line = one_error_line(start_server(f"log.dirs={mount}"))
        assert str(mount) in line and "Read-only file system" in line


def test_a_busy_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_error_line(start_server(f"listeners=PLAINTEXT://127.0.0.1:{port}", f"log.dirs={tmp_path / 'd'}"))
    assert f"127.0.0.1:{port}" in line and "'listeners'" in line and "in use" in line
