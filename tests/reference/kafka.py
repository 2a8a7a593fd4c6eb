"""Start and stop the reference Apache Kafka broker (KRaft, one combined broker/controller on 127.0.0.1).

The broker's classpath is what ``make test`` fetched once into ``server/target/lib`` (``mvn dependency:copy-
dependencies`` on the pinned ``server/pom.xml``); nothing is downloaded here. Storage is formatted in a fresh
directory for every start, so each test session sees a new cluster. Readiness means what it means to a client of
any group: ApiVersions answers, FindCoordinator finds a coordinator (``__consumer_offsets`` exists), and a group on
every partition of ``__consumer_offsets`` is answered without NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import socket
import ssl
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from coordinator.hashing import partition_for
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient

SERVER = Path(__file__).resolve().parent / "server"
LIB = SERVER / "target" / "lib"
NODE_ID = 1  # group-broker's default node.id, so node ids need no normalising
#: How long a readiness probe waits for its connection to close gracefully before aborting it.
PROBE_CLOSE_S = 2.0
JVM_OPTIONS = ("-Xms256m", "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


def unavailable_reason() -> str | None:
    """Why the reference broker cannot run on this machine, or None when it can (CI has Java and Maven)."""
    if shutil.which("java") is None:
        return "Java is not installed: the reference Kafka broker needs Java 17+ (CI has it; see README, Requirements)"
    if not any(LIB.glob("kafka_2.13-*.jar")):
        if shutil.which("mvn") is None:
            return "Maven is not installed: `make test` fetches the reference Kafka broker with it (see README)"
        return (
            "the reference Kafka broker is not fetched yet: run `make test` (it runs mvn dependency:copy-dependencies)"
        )
    return None


def kafka_version() -> str:
    """The pinned release, read off the fetched jar's name."""
    [jar] = LIB.glob("kafka_2.13-*.jar")
    return jar.name.removeprefix("kafka_2.13-").removesuffix(".jar")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ReferenceKafka:
    """One Kafka broker/controller process with ``settings`` (Kafka config keys) on top of single-node defaults."""

    def __init__(
        self,
        work_dir: Path,
        settings: Mapping[str, str],
        client_ssl: ssl.SSLContext | None = None,
        features: Mapping[str, int] | None = None,
        *,
        extra_listeners: Mapping[str, str] | None = None,
        format_args: Sequence[str] = (),
    ) -> None:
        """`client_ssl`: how the readiness probe connects when `settings` make the client listener speak SSL;
        `features`: feature levels the storage is formatted with (`kafka-storage format --feature NAME=LEVEL`,
        e.g. transaction.version=0), instead of the release's defaults.
        `extra_listeners` (name -> security protocol) are served beside the PLAINTEXT one on ports of their own
        (`listener_ports`), their settings in `settings`; `format_args` go to `kafka-storage format` (e.g.
        `--add-scram SCRAM-SHA-512=[name=alice,password=alice-secret]`)."""
        self.client_ssl = client_ssl
        self.features = dict(features or {})
        self.work_dir = work_dir
        self.settings = dict(settings)
        self.extra_listeners = dict(extra_listeners or {})
        self.format_args = list(format_args)
        self.listener_ports: dict[str, int] = {}
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = work_dir / "kafka.log"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _properties(self, controller_port: int) -> str:
        extra = {name: f"{name}://127.0.0.1:{port}" for name, port in self.listener_ports.items()}
        config = {
            "process.roles": "broker,controller",
            "node.id": str(NODE_ID),
            "controller.quorum.voters": f"{NODE_ID}@127.0.0.1:{controller_port}",
            "listeners": ",".join(
                [f"PLAINTEXT://127.0.0.1:{self.port}", f"CONTROLLER://127.0.0.1:{controller_port}", *extra.values()]
            ),
            "advertised.listeners": ",".join([f"PLAINTEXT://127.0.0.1:{self.port}", *extra.values()]),
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": ",".join(
                ["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT", *(f"{n}:{p}" for n, p in self.extra_listeners.items())]
            ),
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(self.work_dir / "data"),
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            **self.settings,
        }
        return "".join(f"{key}={value}\n" for key, value in config.items())

    def _java(self, main: str, *args: str) -> list[str]:
        return [
            "java",
            *JVM_OPTIONS,
            f"-Dlog4j2.configurationFile={SERVER / 'log4j2.yaml'}",
            "-cp",
            str(LIB / "*"),
            main,
            *args,
        ]

    def start(self, timeout_s: float = 60.0) -> str:
        """Format fresh KRaft storage, start the broker and wait until a group coordinator answers."""
        shutil.rmtree(self.work_dir / "data", ignore_errors=True)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.port, controller_port = _free_port(), _free_port()
        self.listener_ports = {name: _free_port() for name in self.extra_listeners}
        properties = self.work_dir / "server.properties"
        properties.write_text(self._properties(controller_port))
        cluster_id = _base64_uuid(uuid.uuid4())  # the form Kafka's own `random-uuid` prints
        formatted = subprocess.run(
            self._java(
                "kafka.tools.StorageTool",
                "format",
                f"--cluster-id={cluster_id}",
                "-c",
                str(properties),
                *(f"--feature={name}={level}" for name, level in self.features.items()),
                *self.format_args,
            ),
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout_s,
        )
        if formatted.returncode != 0:
            raise RuntimeError(f"formatting the reference Kafka storage failed:\n{formatted.stdout}{formatted.stderr}")
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self._java("kafka.Kafka", str(properties)), stdout=log, stderr=subprocess.STDOUT
            )
        try:
            asyncio.run(self._wait_ready(timeout_s))
        except BaseException:
            self.stop()
            raise
        return self.bootstrap

    async def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        last = "not started"
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the reference Kafka broker exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                client = WireClient(*await asyncio.open_connection("127.0.0.1", self.port, ssl=self.client_ssl))
            except OSError as exc:
                last = str(exc)
                await asyncio.sleep(0.1)
                continue
            try:
                await client.call(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(client_software_name="group-broker-tests"))
                probes = FindCoordinatorRequest(coordinator_keys=self._one_group_per_partition())
                while time.monotonic() < deadline:
                    found = await client.call(ApiKey.FIND_COORDINATOR, 4, probes)
                    described = await client.call(
                        ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=probes.coordinator_keys)
                    )
                    errors = {c.error_code for c in found.coordinators} | {g.error_code for g in described.groups}
                    if errors == {ErrorCode.NONE}:
                        return
                    last = f"group coordinator errors {sorted(errors)}"
                    await asyncio.sleep(0.1)
            except (OSError, asyncio.IncompleteReadError) as exc:
                last = str(exc)
            finally:
                await close_probe(client)
        raise RuntimeError(f"the reference Kafka broker was not ready in {timeout_s:g}s ({last}):\n{self.log_tail()}")

    def _one_group_per_partition(self) -> list[str]:
        partitions = int(self.settings.get("offsets.topic.num.partitions", "50"))
        groups: dict[int, str] = {}
        for n in range(100 * partitions):
            groups.setdefault(partition_for(f"ready-{n}", partitions), f"ready-{n}")
            if len(groups) == partitions:
                break
        return sorted(groups.values())

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout_s: float = 30.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


async def close_probe(client: WireClient, timeout_s: float = PROBE_CLOSE_S) -> None:
    """Close a readiness probe's connection without ever failing the probe, and leave no transport behind.

    A broker still starting may reset the connection (or end its TLS session) under the probe: the graceful close
    then raises that reset (`wait_closed`), which escaped the retry loop and failed the start at the first such
    connection. Over TLS the graceful close also waits for the broker's close_notify (up to asyncio's 30 s
    ssl_shutdown_timeout). Either way the transport is aborted instead, so nothing is left for the garbage
    collector to find unclosed."""
    writer = client.writer
    writer.close()
    try:
        await asyncio.wait_for(writer.wait_closed(), timeout_s)
    except (TimeoutError, OSError):
        writer.transport.abort()


def _base64_uuid(value: uuid.UUID) -> str:
    """Kafka's cluster-id form: a UUID's 16 bytes in URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")
