"""The Java client (Apache Kafka's kafka-clients, pinned in tests/reference/clients/pom.xml) against the broker process.

The Java side is three small programs in `tests/reference/clients` speaking JSON lines on stdin/stdout, the same
protocol as the kafkajs scripts (`{"id", "op", ...}` -> `{"id", "result"|"error"}`): `AdminServer` (the
AdminClient), `ProducerServer` (a KafkaProducer) and `ConsumerServer` (named KafkaConsumers, all in one JVM). One
JVM per role serves the whole module, so the tests pay three JVM starts. `make install-test` builds the programs and
copies their classpath to `target/lib`; the tests only run `java` and never call Maven or download anything.

Error replies carry the class of the exception the Java client raised, so the admin tests assert on exactly what
an application would catch (`GroupNotEmptyException`, ...).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.jsonlines import JsonLinesChild
from tests.e2e.scenario import (
    HEARTBEAT_INTERVAL_MS,
    SESSION_TIMEOUT_MS,
    WAIT_S,
    GroupView,
    Opened,
    Pump,
    Rec,
    assert_broker_accepted_every_request,
    end_offsets,
    keyed,
    run_group_lifecycle,
    unique,
)
from tests.support.broker_process import ROOT, BrokerProcess, wait_until

pytestmark = pytest.mark.integration

CLIENTS = ROOT / "tests" / "reference" / "clients"
CLASSES = CLIENTS / "target" / "classes"
LIB = CLIENTS / "target" / "lib"
ERRORS = "org.apache.kafka.common.errors."
# A short-lived test JVM: the C1 compiler only and the serial collector start faster and share the two cores better.
JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def _java_command(program: str) -> list[str]:
    java = shutil.which("java")
    if java is None:
        pytest.skip(
            "java is not on PATH: the Java client tests need a JDK 17+ and Maven (e.g. apt-get install "
            "openjdk-17-jdk-headless maven), then `make test` builds tests/reference/clients"
        )
    if not (CLASSES / "reference" / "clients" / f"{program}.class").is_file() or not any(LIB.glob("kafka-clients-*")):
        pytest.fail("run make test (it builds tests/reference/clients)")
    classpath = os.pathsep.join([str(CLASSES), str(LIB / "*")])
    return [java, *JVM_FLAGS, "-cp", classpath, f"reference.clients.{program}"]


class JavaProgram(JsonLinesChild):
    """One of the Java client programs (it serves requests once it printed `ready`)."""

    def __init__(self, program: str, bootstrap: str, log_dir: Path) -> None:
        super().__init__([*_java_command(program), bootstrap], log_dir, program)

    def error(self, op: str, **args: Any) -> str:
        """The class of the exception the Java client raised for `op` (failing if it succeeded)."""
        reply = self.request(op, **args)
        assert "error" in reply, f"{op} {args} succeeded: {reply}"
        return str(reply["error"]["type"])


class JavaConsumer:
    """One KafkaConsumer inside the module's ConsumerServer, addressed by its name."""

    def __init__(self, host: JavaProgram, group: str, topic: str, name: str) -> None:
        self.host, self.name = host, name
        host.call(
            "open",
            name=name,
            group=group,
            topic=topic,
            groupProtocol="classic",
            sessionTimeoutMs=SESSION_TIMEOUT_MS,
            heartbeatIntervalMs=HEARTBEAT_INTERVAL_MS,
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

    def close(self) -> None:
        self.host.call("close", name=self.name)


class JavaAdapter:
    """The scenario's ClientAdapter over the three Java programs."""

    def __init__(self, bootstrap: str, log_dir: Path, stack: contextlib.ExitStack) -> None:
        def start(program: str) -> JavaProgram:
            child = JavaProgram(program, bootstrap, log_dir)
            stack.callback(child.close)
            return child

        # The three JVMs start side by side; each serves once it printed `ready`.
        self.admin, self.producer, self.consumers = programs = [
            start(p) for p in ("AdminServer", "ProducerServer", "ConsumerServer")
        ]
        for program in programs:
            program.wait_event("ready")

    def create_topic(self, topic: str, partitions: int) -> None:
        assert self.admin.call("createTopic", topic=topic, partitions=partitions) is True

    def produce(self, topic: str, records: Sequence[tuple[str, str]]) -> list[Rec]:
        acked = self.producer.call("send", topic=topic, records=[list(r) for r in records])
        return [Rec(a["partition"], a["offset"], k, v) for a, (k, v) in zip(acked, records, strict=True)]

    def consumer(self, group: str, topic: str, name: str) -> JavaConsumer:
        return JavaConsumer(self.consumers, group, topic, name)

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


@pytest.fixture(scope="module")
def java(bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaAdapter]:
    with contextlib.ExitStack() as stack:
        yield JavaAdapter(bootstrap, tmp_path_factory.mktemp("java-clients"), stack)


def test_group_lifecycle(java: JavaAdapter, broker_process: BrokerProcess) -> None:
    """600 records over 6 partitions, 3 consumers (classic protocol), one leaves, commit, a new one resumes there."""
    run_group_lifecycle(java, broker_process, "java")
    assert_broker_accepted_every_request(broker_process, "Java client")


def _consume_all(java: JavaAdapter, opened: Opened, group: str, topic: str, produced: list[Rec]) -> JavaConsumer:
    """A member of `group` that has received every produced record, in a Stable group."""
    member = opened.track(java.consumer(group, topic, unique(f"{group}-member")))
    pump = Pump([member])
    pump.until(
        lambda: len(pump.all_received()) == len(produced) and java.describe(group, topic).state == "Stable",
        f"the member of {group} to consume the topic",
    )
    return member


def test_admin_client_group_operations(java: JavaAdapter, broker_process: BrokerProcess) -> None:
    """listConsumerGroups, describeConsumerGroups, deleteConsumerGroups, alter/list/deleteConsumerGroupOffsets,
    with the exceptions Kafka's AdminClient raises when the broker refuses."""
    admin = java.admin
    topic = unique("java-admin")
    active, idle, manual, unknown = (unique(f"java-{name}") for name in ("active", "idle", "manual", "unknown"))
    java.create_topic(topic, 2)
    produced = java.produce(topic, keyed(0, 20))

    with Opened(java) as opened:
        # `idle`: consumed, committed and left, so it is Empty with offsets. `active`: keeps its member.
        first = _consume_all(java, opened, idle, topic, produced)
        first.commit()
        opened.close(first)
        member = _consume_all(java, opened, active, topic, produced)
        # `manual`: never had a member; the admin client commits its offsets (a "simple" consumer group).
        assert admin.call("alterOffsets", group=manual, topic=topic, offsets={"0": 3, "1": 5}) is True
        assert java.committed_offsets(manual, topic) == {0: 3, 1: 5}

        listed = {g["groupId"]: g for g in admin.call("listGroups")}
        assert {k: listed[active][k] for k in ("state", "simple")} == {"state": "Stable", "simple": False}
        assert {k: listed[idle][k] for k in ("state", "simple")} == {"state": "Empty", "simple": False}
        assert {k: listed[manual][k] for k in ("state", "simple")} == {"state": "Empty", "simple": True}
        assert unknown not in listed

        described = admin.call("describeGroup", group=active)
        assert (described["state"], described["simple"], described["type"]) == ("Stable", False, "Classic")
        assert described["partitionAssignor"] == "range"  # the first of the Java consumer's default assignors
        host, port = broker_process.bootstrap.rsplit(":", 1)
        assert (described["coordinator"]["host"], described["coordinator"]["port"]) == (host, int(port))
        [only] = described["members"]
        assert only["clientId"] == member.name
        assert only["assignment"] == {topic: [0, 1]}
        idle_described = admin.call("describeGroup", group=idle)
        assert (idle_described["state"], idle_described["members"]) == ("Empty", [])
        # Up to DescribeGroups v5 (the newest the broker serves) Kafka describes a group it does not know as Dead,
        # without an error (v6, KIP-1043, answers GROUP_ID_NOT_FOUND instead).
        assert admin.call("describeGroup", group=unknown)["state"] == "Dead"

        # Offsets: the admin client may not commit for a group with live members; it may for an empty one.
        assert admin.error("alterOffsets", group=active, topic=topic, offsets={"0": 1}) == (
            ERRORS + "UnknownMemberIdException"
        )
        assert admin.call("alterOffsets", group=idle, topic=topic, offsets={"0": 7}) is True
        assert java.committed_offsets(idle, topic) == {**end_offsets(produced), 0: 7}
        # ... and may delete offsets of a topic the group is not subscribed to (any topic, for a simple group).
        assert admin.error("deleteOffsets", group=active, topic=topic, partitions=[0]) == (
            ERRORS + "GroupSubscribedToTopicException"
        )
        assert admin.call("deleteOffsets", group=manual, topic=topic, partitions=[0]) is True
        assert java.committed_offsets(manual, topic) == {1: 5}
        assert admin.error("deleteOffsets", group=unknown, topic=topic, partitions=[0]) == (
            ERRORS + "GroupIdNotFoundException"
        )

        # Groups: an empty group is deleted with its offsets, one with members or none at all is refused.
        assert admin.call("deleteGroup", group=idle) is True
        assert admin.error("deleteGroup", group=active) == ERRORS + "GroupNotEmptyException"
        assert admin.error("deleteGroup", group=unknown) == ERRORS + "GroupIdNotFoundException"
        listed_after = {g["groupId"] for g in admin.call("listGroups")}
        assert idle not in listed_after
        assert active in listed_after
        assert java.committed_offsets(idle, topic) == {}
        opened.close(member)

    # Once its last member left, the other group can be deleted too.
    wait_until(lambda: java.describe(active, topic).state == "Empty", WAIT_S, what="the active group to become Empty")
    assert admin.call("deleteGroup", group=active) is True
    assert admin.call("deleteGroup", group=manual) is True
    assert {active, manual}.isdisjoint(g["groupId"] for g in admin.call("listGroups"))
    assert_broker_accepted_every_request(broker_process, "Java AdminClient")
