"""ZooKeeper and Burrow (LinkedIn's consumer-lag monitor) as child processes, for interop tests against the broker.

Both come from Debian packages (`zookeeper`, `burrow`); Burrow 1.2.1 needs ZooKeeper even when it only reads
`__consumer_offsets`. Every process gets a generated config in its own temporary directory, free 127.0.0.1 ports,
and its output in a file there (no pipes to drain). `stop()` is safe to call on a process that never started or
already exited, so callers can always stop everything in `finally`.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from tests.support.broker_process import wait_until

ZK_SERVER = Path("/usr/share/zookeeper/bin/zkServer.sh")
BURROW_BINARY = "Burrow"
DEBIAN_PACKAGES = ("burrow", "zookeeper")

T = TypeVar("T")


def missing_tools() -> list[str]:
    """What is not installed, as a readable list; empty when ZooKeeper, Java and Burrow are all there."""
    missing = []
    if shutil.which(BURROW_BINARY) is None:
        missing.append(f"{BURROW_BINARY} (Debian package `burrow`)")
    if not ZK_SERVER.exists():
        missing.append(f"{ZK_SERVER} (Debian package `zookeeper`)")
    if shutil.which("java") is None:
        missing.append("java (pulled in by the Debian package `zookeeper`: default-jre)")
    return missing


def free_port() -> int:
    """A port that was free a moment ago: bind port 0 on 127.0.0.1 and give the number back."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def poll(
    what: str,
    probe: Callable[[], T | None],
    timeout_s: float,
    interval_s: float = 0.2,
    detail: Callable[[], str] | None = None,
) -> T:
    """Call `probe` until it returns something other than None; at the deadline fail naming `what`, with `detail`."""
    found: list[T] = []

    def probed() -> bool:
        result = probe()
        if result is not None:
            found.append(result)
        return result is not None

    wait_until(probed, timeout_s, interval_s, what=what, detail=detail)
    return found[0]


class ChildProcess:
    """A child process whose stdout and stderr go to one log file; terminated (then killed) on stop."""

    name = "child"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = workdir / f"{self.name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None

    def _spawn(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self._log_file = self.log_path.open("wb")
        self.process = subprocess.Popen(
            args,
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
        )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_alive(self) -> None:
        if not self.alive():
            code = None if self.process is None else self.process.returncode
            raise AssertionError(f"{self.name} exited (code {code}):\n{self.log_tail()}")

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def stop(self, timeout_s: float = 15.0) -> None:
        """SIGTERM, wait, then SIGKILL if it is still there; always closes the log file."""
        try:
            if self.process is not None and self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout_s)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(10)
        finally:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None


class ZooKeeperProcess(ChildProcess):
    """A standalone ZooKeeper on 127.0.0.1 with an ephemeral port, admin server off, data in `workdir`."""

    name = "zookeeper"

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.port = 0

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 30.0) -> str:
        self.port = free_port()
        data_dir = self.workdir / "data"
        data_dir.mkdir(exist_ok=True)
        config = self.workdir / "zoo.cfg"
        config.write_text(
            "\n".join(
                [
                    "tickTime=500",
                    f"dataDir={data_dir}",
                    f"clientPort={self.port}",
                    "clientPortAddress=127.0.0.1",
                    "admin.enableServer=false",
                    "maxClientCnxns=0",
                    "",
                ]
            )
        )
        env = {
            **os.environ,
            "JMXDISABLE": "true",
            "SERVER_JVMFLAGS": "-Xmx256m -Dzookeeper.admin.enableServer=false",
        }
        # start-foreground execs java, so the child we hold is ZooKeeper itself.
        self._spawn(["/bin/bash", str(ZK_SERVER), "start-foreground", str(config)], env)
        poll("ZooKeeper to serve on " + self.connect, self._serving, timeout_s)
        return self.connect

    def _serving(self) -> bool | None:
        self.check_alive()
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"srvr")  # the one four-letter word ZooKeeper 3.5+ allows by default
                reply = sock.recv(4096)
        except OSError:
            return None
        return True if b"Mode: standalone" in reply else None


class BurrowProcess(ChildProcess):
    """Burrow 1.2.1 watching one cluster: the broker's topic offsets and its `__consumer_offsets`."""

    name = "burrow"

    def __init__(
        self,
        workdir: Path,
        bootstrap: str,
        zookeeper: str,
        cluster: str = "local",
        kafka_version: str = "2.0.0",
        log_level: str = "info",
    ) -> None:
        super().__init__(workdir)
        self.bootstrap = bootstrap
        self.zookeeper = zookeeper
        self.cluster = cluster
        self.kafka_version = kafka_version
        self.log_level = log_level
        self.http_port = 0

    def config_text(self) -> str:
        servers = json.dumps([self.bootstrap])
        return f"""\
[general]
pidfile="{self.workdir / "burrow.pid"}"

[logging]
level="{self.log_level}"

[zookeeper]
servers=["{self.zookeeper}"]
timeout=6
root-path="/burrow-interop"

[client-profile.broker]
client-id="burrow-interop"
kafka-version="{self.kafka_version}"

[cluster.{self.cluster}]
class-name="kafka"
servers={servers}
client-profile="broker"
topic-refresh=1
offset-refresh=1

[consumer.{self.cluster}]
class-name="kafka"
cluster="{self.cluster}"
servers={servers}
client-profile="broker"
offsets-topic="__consumer_offsets"
start-latest=false
group-blacklist=""
group-whitelist=""

[storage.default]
class-name="inmemory"
workers=4
intervals=10
expire-group=604800
min-distance=1

[evaluator.default]
class-name="caching"
expire-cache=1

[httpserver.default]
address="127.0.0.1:{self.http_port}"
"""

    def start(self, timeout_s: float = 30.0) -> None:
        self.http_port = free_port()
        config_dir = self.workdir / "config"
        config_dir.mkdir(exist_ok=True)
        (config_dir / "burrow.toml").write_text(self.config_text())
        binary = shutil.which(BURROW_BINARY)
        assert binary is not None
        self._spawn([binary, "--config-dir", str(config_dir)])
        poll("Burrow's HTTP API to list cluster " + self.cluster, self._cluster_listed, timeout_s)

    def _cluster_listed(self) -> bool | None:
        status, body = self.get("/v3/kafka")
        return True if status == 200 and self.cluster in body.get("clusters", []) else None

    def get(self, path: str) -> tuple[int, dict[str, Any]]:
        """GET from Burrow's HTTP API: (status, JSON body); (0, {}) while it does not answer yet."""
        self.check_alive()
        url = f"http://127.0.0.1:{self.http_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            with exc:
                raw = exc.read()
            try:
                return exc.code, json.loads(raw or b"{}")
            except ValueError:
                return exc.code, {"raw": raw.decode(errors="replace")}
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError):
            return 0, {}

    def topic_offsets(self, topic: str) -> list[int] | None:
        status, body = self.get(f"/v3/kafka/{self.cluster}/topic/{topic}")
        return body.get("offsets") if status == 200 else None

    def consumer_lag(self, group: str) -> dict[str, Any] | None:
        """The group's evaluated status with every partition (the `/lag` endpoint), None while Burrow lacks it."""
        status, body = self.get(f"/v3/kafka/{self.cluster}/consumer/{group}/lag")
        if status != 200 or body.get("error"):
            return None
        result: dict[str, Any] = body["status"]
        return result

    def consumer_status(self, group: str) -> dict[str, Any] | None:
        """The `/status` endpoint: the group's evaluation listing only partitions that are not OK."""
        status, body = self.get(f"/v3/kafka/{self.cluster}/consumer/{group}/status")
        if status != 200 or body.get("error"):
            return None
        result: dict[str, Any] = body["status"]
        return result
