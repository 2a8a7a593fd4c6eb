"""A broker that cannot start says why in one line naming the directory or address and the cause, exit code 2.

Before this, a read-only or unusable data directory ended the process with a raw traceback.
"""

from __future__ import annotations

import shlex
import socket
import subprocess
from pathlib import Path

import pytest

from broker.config import load_config
from broker.startup import bind_listener
from tests.support.broker_process import ROOT, run_server, running_broker
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


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under `root` with its size and mtime: what "touches nothing" compares."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_a_busy_port_is_one_sentence_and_creates_nothing(tmp_path: Path) -> None:
    data = tmp_path / "d"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_error_line(start_server(f"listeners=PLAINTEXT://127.0.0.1:{port}", f"log.dirs={data}"))
    assert line == (
        f"group-broker: 127.0.0.1:{port} is in use (listener PLAINTEXT://127.0.0.1:{port} in 'listeners'); "
        "set listeners=PLAINTEXT://127.0.0.1:<port> or PORT=<port> make run"
    )
    assert not data.exists()  # checked before the data directory (and `__consumer_offsets`) is created


def test_a_busy_port_creates_no_log_file(tmp_path: Path) -> None:
    """`log.file` is a start-up check too, but one that creates nothing: the file appears with the first log line,
    after the listeners are bound and the data directory is locked."""
    log_file = tmp_path / "x.log"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_error_line(
            start_server(
                f"listeners=PLAINTEXT://127.0.0.1:{port}", f"log.dirs={tmp_path / 'd'}", f"log.file={log_file}"
            )
        )
    assert line.startswith(f"group-broker: 127.0.0.1:{port} is in use")
    assert not log_file.exists()


def test_a_second_broker_on_the_same_data_dir_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_broker(data) as first:
        assert first.process is not None
        assert (data / ".lock").read_text().strip() == str(first.process.pid)
        before = _tree(data)
        line = one_error_line(start_server(f"log.dirs={data}"))
        assert _tree(data) == before
        assert line == (
            f"group-broker: data directory {data} ('log.dirs') is locked by another broker "
            f"(pid {first.process.pid}, {data / '.lock'}); stop it or set log.dirs to another directory"
        )
        assert first.process.poll() is None  # the running broker is untouched
    # released at exit: the directory can be used again
    with running_broker(data) as again:
        assert again.process is not None
        assert (data / ".lock").read_text().strip() == str(again.process.pid)


@pytest.mark.parametrize(("make_args", "port"), [([], 9092), (["PORT=19092"], 19092)])
def test_make_run_takes_the_port_from_port(make_args: list[str], port: int) -> None:
    """The busy-port sentence says `PORT=... make run`; the recipe `make` would run must listen there."""
    dry_run = subprocess.run(
        ["make", "-n", "-s", "run", *make_args], capture_output=True, text=True, cwd=ROOT, check=True
    )
    command = shlex.split(dry_run.stdout.splitlines()[-1])
    assert command[1:3] == ["server.py", "server.properties"]
    overrides = [command[i + 1] for i, arg in enumerate(command) if arg == "--override"]
    config = load_config(ROOT / "server.properties", overrides, {})
    assert config.listeners == [("PLAINTEXT", "127.0.0.1", port)]


@pytest.mark.parametrize(("host", "family"), [("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)])
def test_a_listener_is_bound_in_its_addresss_family(host: str, family: socket.AddressFamily) -> None:
    """Binding moved out of asyncio (so it happens before storage opens); IPv6 listeners must still bind."""
    with bind_listener(f"PLAINTEXT://[{host}]:0", host, 0) as sock:
        assert sock.family == family
        assert sock.getsockname()[0] == host
