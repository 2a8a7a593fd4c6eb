"""The Java client (Apache Kafka's kafka-clients, pinned in tests/reference/clients/pom.xml) as the end-to-end
scenarios drive it, shared by the classic-protocol tests (test_java_client.py) and the KIP-848 ones
(test_java_consumer_protocol.py).

The Java side is three small programs in `tests/reference/clients` speaking JSON lines on stdin/stdout, the same
protocol as the kafkajs scripts (`{"id", "op", ...}` -> `{"id", "result"|"error"}`): `AdminServer` (the
AdminClient), `ProducerServer` (a KafkaProducer) and `ConsumerServer` (named KafkaConsumers, all in one JVM). One
JVM per role serves a whole test module, so a module pays three JVM starts. `make install-test` builds the programs
and copies their classpath to `target/lib`; the tests only run `java` and never call Maven or download anything.

`started` runs any of the programs on their own (tests/e2e/test_cluster_admin.py drives the AdminClient's cluster
calls and the producer's `clientInstanceId` without the consumer JVM).

Error replies carry the class of the exception the Java client raised, so the admin tests assert on exactly what
an application would catch (`GroupNotEmptyException`, ...).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.jsonlines import JsonLinesChild
from tests.e2e.scenario import HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS, GroupView, Rec, end_offsets, unique
from tests.e2e.txn_scenario import transformed
from tests.support.broker_process import ROOT

CLIENTS = ROOT / "tests" / "reference" / "clients"
CLASSES = CLIENTS / "target" / "classes"
LIB = CLIENTS / "target" / "lib"
ERRORS = "org.apache.kafka.common.errors."
#: slf4j-simple's level for the Java client's NetworkClient, which logs each request's header at DEBUG.
LOG_REQUESTS = {"org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient": "debug"}
SENT_REQUEST = re.compile(r"Sending \w+ request with header RequestHeader\(apiKey=(\w+), apiVersion=(\d+)")
# A short-lived test JVM: the C1 compiler only and the serial collector start faster and share the two cores better.
# The consumer's KIP-320 position validation logs each OffsetForLeaderEpoch answer it handles at debug: kept in the
# program's stderr file, where tests/e2e/test_log_start_epochs.py finds it (against Kafka as against group-broker).
VALIDATION_LOGGER = "org.apache.kafka.clients.consumer.internals.OffsetsForLeaderEpochUtils"
VALIDATION_LOG_LINE = "Handling OffsetsForLeaderEpoch response for "
JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", f"-Dorg.slf4j.simpleLogger.log.{VALIDATION_LOGGER}=debug"]


def _java_command(program: str, properties: Mapping[str, str] | None = None) -> list[str]:
    java = shutil.which("java")
    if java is None:
        pytest.skip(
            "java is not on PATH: the Java client tests need a JDK 17+ and Maven (e.g. apt-get install "
            "openjdk-17-jdk-headless maven), then `make test` builds tests/reference/clients"
        )
    if not (CLASSES / "reference" / "clients" / f"{program}.class").is_file() or not any(LIB.glob("kafka-clients-*")):
        pytest.fail("run make test (it builds tests/reference/clients)")
    classpath = os.pathsep.join([str(CLASSES), str(LIB / "*")])
    defines = [f"-D{key}={value}" for key, value in (properties or {}).items()]
    return [java, *JVM_FLAGS, *defines, "-cp", classpath, f"reference.clients.{program}"]


class JavaProgram(JsonLinesChild):
    """One of the Java client programs (it serves requests once it printed `ready`)."""

    def __init__(
        self, program: str, bootstrap: str, log_dir: Path, properties: Mapping[str, str] | None = None
    ) -> None:
        """`properties`: JVM system properties (`-D`), e.g. a logger's level for slf4j-simple."""
        super().__init__([*_java_command(program, properties), bootstrap], log_dir, program)

    def error(self, op: str, **args: Any) -> str:
        """The class of the exception the Java client raised for `op` (failing if it succeeded)."""
        reply = self.request(op, **args)
        assert "error" in reply, f"{op} {args} succeeded: {reply}"
        return str(reply["error"]["type"])


def started(
    bootstrap: str,
    log_dir: Path,
    stack: contextlib.ExitStack,
    *programs: str,
    properties: Mapping[str, Mapping[str, str]] | None = None,
) -> list[JavaProgram]:
    """The named programs, started side by side (each JVM serves once it printed `ready`), closed with `stack`;
    `properties` gives a program its JVM system properties, by program name."""
    children = []
    for program in programs:
        child = JavaProgram(program, bootstrap, log_dir, (properties or {}).get(program))
        stack.callback(child.close)
        children.append(child)
    for child in children:
        child.wait_event("ready")
    return children


def _acked(acked: Sequence[dict[str, int]], records: Sequence[tuple[str, str]]) -> list[Rec]:
    """ProducerServer's [{partition, offset}] answer beside the records it sent, in order."""
    return [Rec(a["partition"], a["offset"], k, v) for a, (k, v) in zip(acked, records, strict=True)]


class JavaConsumer:
    """One KafkaConsumer inside the module's ConsumerServer, addressed by its name. With `group_protocol="consumer"`
    (KIP-848) the broker decides the session timeout and heartbeat interval; a classic member sets small ones."""

    def __init__(
        self,
        host: JavaProgram,
        group: str,
        topic: str,
        name: str,
        group_protocol: str = "classic",
        isolation_level: str = "read_uncommitted",
    ) -> None:
        self.host, self.name, self.topic = host, name, topic
        timeouts = (
            {"sessionTimeoutMs": SESSION_TIMEOUT_MS, "heartbeatIntervalMs": HEARTBEAT_INTERVAL_MS}
            if group_protocol == "classic"
            else {}
        )
        host.call(
            "open",
            name=name,
            group=group,
            topic=topic,
            groupProtocol=group_protocol,
            isolationLevel=isolation_level,
            **timeouts,
        )

    def poll(self, timeout_s: float) -> list[Rec]:
        records = self.host.call("poll", name=self.name, timeoutMs=int(timeout_s * 1000))
        return [Rec(r["partition"], r["offset"], r["key"], r["value"]) for r in records]

    def assignment(self) -> set[int]:
        return set(self.host.call("assignment", name=self.name))

    def commit(self) -> None:
        self.host.call("commit", name=self.name)

    def committed(self, partitions: Iterable[int]) -> dict[int, int | None]:
        offsets = self.host.call("committed", name=self.name, partitions=list(partitions))
        return {int(p): offset for p, offset in offsets.items()}

    def committed_leader_epochs(self, partitions: Iterable[int]) -> dict[int, int | None]:
        """The leader epoch each committed offset carries (KIP-320), None where there is none."""
        epochs = self.host.call("committedLeaderEpochs", name=self.name, partitions=list(partitions))
        return {int(p): epoch for p, epoch in epochs.items()}

    def close(self) -> None:
        self.host.call("close", name=self.name)


class JavaAdapter:
    """The scenario's ClientAdapter over the three Java programs; its consumers use `group_protocol`."""

    def __init__(
        self,
        bootstrap: str,
        log_dir: Path,
        stack: contextlib.ExitStack,
        group_protocol: str = "classic",
        properties: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.group_protocol = group_protocol
        self.admin, self.producer, self.consumers = started(
            bootstrap, log_dir, stack, "AdminServer", "ProducerServer", "ConsumerServer", properties=properties
        )

    def create_topic(self, topic: str, partitions: int) -> None:
        assert self.admin.call("createTopic", topic=topic, partitions=partitions) is True

    def produce(self, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None) -> list[Rec]:
        acked = self.producer.call("send", topic=topic, records=[list(r) for r in records], partition=partition)
        return _acked(acked, records)

    def consumer(self, group: str, topic: str, name: str) -> JavaConsumer:
        return JavaConsumer(self.consumers, group, topic, name, self.group_protocol)

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        return {int(p): offset for p, offset in self.admin.call("listOffsets", group=group, topic=topic).items()}

    def describe(self, group: str, topic: str) -> GroupView:
        described = self.admin.call("describeGroup", group=group)
        return GroupView(
            described["state"],
            {m["memberId"]: frozenset(m["assignment"].get(topic, [])) for m in described["members"]},
        )

    def close(self) -> None:
        """The programs are closed by the module's exit stack."""


class JavaPipeline:
    """consume-transform-produce with the Java client: a read_committed member in the ConsumerServer and a
    transactional producer in the ProducerServer; the offsets go with the member's `groupMetadata()` (KIP-447)."""

    def __init__(self, java: JavaAdapter, group: str, topic: str, transactional_id: str, name: str) -> None:
        self.producer, self.topic, self.name = java.producer, topic, f"{name}-producer"
        self.producer.call("openTransactional", name=self.name, transactionalId=transactional_id)
        try:
            self.consumer = JavaConsumer(java.consumers, group, topic, name, isolation_level="read_committed")
        except BaseException:
            self.producer.call("closeTransactional", name=self.name)
            raise

    def transaction(self, consumed: Sequence[Rec], output: str, commit: bool) -> list[Rec]:
        records = [transformed(r) for r in consumed]
        acked = self.producer.call(
            "transaction",
            name=self.name,
            topic=output,
            records=[list(r) for r in records],
            offsetsTopic=self.topic,
            offsets={str(p): offset for p, offset in end_offsets(consumed).items()},
            group=self.consumer.host.call("groupMetadata", name=self.consumer.name),
            commit=commit,
        )
        return _acked(acked, records)

    def close(self) -> None:
        try:
            self.consumer.close()
        finally:
            self.producer.call("closeTransactional", name=self.name)


class JavaTxnAdapter(JavaAdapter):
    """`txn_scenario.TxnAdapter` for the Java client (classic-protocol consumers); its three JVMs are its own and
    stop with `close()`. The producer logs every request it sends (NetworkClient at DEBUG), so a test can tell
    which versions it used: `sent_versions`."""

    def __init__(self, bootstrap: str, log_dir: Path) -> None:
        self._programs = contextlib.ExitStack()
        try:
            super().__init__(bootstrap, log_dir, self._programs, properties={"ProducerServer": LOG_REQUESTS})
        except BaseException:
            self._programs.close()
            raise

    def sent_versions(self) -> dict[str, set[int]]:
        """By API name (Kafka's, e.g. END_TXN), the versions the producer sent so far, read off its log."""
        sent: dict[str, set[int]] = {}
        for api, version in SENT_REQUEST.findall(self.producer.stderr_path.read_text()):
            sent.setdefault(api, set()).add(int(version))
        return sent

    def close(self) -> None:
        self._programs.close()

    def pipeline(self, group: str, topic: str, transactional_id: str, name: str) -> JavaPipeline:
        return JavaPipeline(self, group, topic, transactional_id, name)

    def reader(self, topic: str, name: str, read_committed: bool) -> JavaConsumer:
        isolation = "read_committed" if read_committed else "read_uncommitted"
        return JavaConsumer(self.consumers, unique(f"{name}-group"), topic, name, isolation_level=isolation)
