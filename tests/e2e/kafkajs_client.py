"""kafkajs (2.2.4, pinned by package-lock.json) as the end-to-end tests drive it: the node scripts in
`tests/e2e/js/` as children speaking JSON lines (`jsonlines.py`), and the adapter of the transaction scenario.

`admin.js` and `producer.js` answer requests (`{"id", "op", ...}` -> `{"id", "result"|"error"}`), `consumer.js` is
one consumer that prints one line per assignment, message and commit and leaves its group cleanly on SIGTERM, and
`transactional.js` is a transactional producer (`producer.transaction()`, `transaction.sendOffsets`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.jsonlines import Event, JsonLinesChild
from tests.e2e.scenario import Rec, end_offsets, unique
from tests.e2e.txn_scenario import transformed
from tests.support.broker_process import ROOT

JS = Path(__file__).resolve().parent / "js"


def node() -> str:
    """The node binary; fails the test at once, clearly, without node or kafkajs."""
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is not on PATH: the kafkajs end-to-end tests need Node.js (see README, Requirements)")
    if not (ROOT / "node_modules" / "kafkajs" / "package.json").is_file():
        pytest.fail("kafkajs is not installed in node_modules: run `make test` (npm ci from package-lock.json)")
    return found


class NodeScript(JsonLinesChild):
    """One `node tests/e2e/js/<script>` child."""

    def __init__(self, script: str, args: list[str], log_dir: Path, name: str) -> None:
        super().__init__([node(), str(JS / script), *args], log_dir, name)


class Harness:
    """The node children of one test, all closed (and any survivor killed) when the test ends."""

    def __init__(self, bootstrap: str, log_dir: Path, stack: contextlib.ExitStack) -> None:
        self.bootstrap = bootstrap
        self.log_dir = log_dir
        self._stack = stack
        self._count = itertools.count()

    def start(self, script: str, name: str, *args: str) -> NodeScript:
        child = NodeScript(script, [self.bootstrap, *args], self.log_dir, f"{name}-{next(self._count)}")
        self._stack.callback(child.close)
        return child

    def rpc(self, script: str, name: str, *args: str) -> NodeScript:
        child = self.start(script, name, *args)
        child.wait_event("ready")
        return child

    def consumer(self, name: str, group: str, topic: str, **options: Any) -> NodeScript:
        """A consumer.js member; `options` are consumer.js's (autoCommit) and kafkajs's consumer options."""
        config = {"group": group, "topic": topic, "clientId": name, **options}
        return self.start("consumer.js", name, json.dumps(config))


@contextlib.contextmanager
def harness(bootstrap: str, log_dir: Path) -> Iterator[Harness]:
    with contextlib.ExitStack() as stack:
        yield Harness(bootstrap, log_dir, stack)


#: The crashes of a consumer whose coordinator's node stopped (its connection closed mid-request, or refused until
#: the retries ran out): kafkajs restarts the consumer (kafkajs#253), which then finds the group's new coordinator.
STOPPED_NODE_CRASHES = (
    "KafkaJSConnectionClosedError: Closed connection",
    "KafkaJSNumberOfRetriesExceeded: Connection error: connect ECONNREFUSED",
)


def stop_consumer(consumer: NodeScript, tolerated: tuple[str, ...] = ()) -> None:
    """SIGTERM: consumer.disconnect() (LeaveGroup), "stopped", exit 0, and no crash on the way but those whose
    error starts with one of `tolerated`. A consumer that did crash and restart may never finish its disconnect
    (kafkajs#1147, #1639: the restarted consumer's loop is not the one disconnect() waits for): it is killed, and
    its member left to expire."""
    consumer.terminate()
    crashes = [e for e in consumer.of_kind("crash") if not e["error"].startswith(tolerated)]
    assert not crashes, crashes
    if consumer.of_kind("crash"):
        consumer.wait_at_most(lambda events: any(e.get("event") == "stopped" for e in events), 10, "stopped")
        consumer.close(timeout_s=1)
        return
    consumer.wait_event("stopped", timeout_s=30)
    assert consumer.close() == 0, consumer.stderr_tail()


# -- the transaction scenario's adapter ---------------------------------------------------------------------------


def _messages(events: list[Event]) -> list[Event]:
    return [e for e in events if e.get("event") == "message"]


class KafkajsConsumer:
    """A consumer.js member as the scenarios poll consumers: `poll` hands over the messages it printed since the
    last poll, waiting up to `timeout_s` for one."""

    def __init__(
        self,
        h: Harness,
        admin: NodeScript,
        group: str,
        topic: str,
        name: str,
        tolerated_crashes: tuple[str, ...] = (),
        **options: Any,
    ) -> None:
        """`tolerated_crashes`: the crashes (an error's start) closing does not fail on (`stop_consumer`)."""
        self.name, self.group, self.topic, self.admin = name, group, topic, admin
        self.tolerated_crashes = tolerated_crashes
        self.script = h.consumer(name, group, topic, **options)
        self._taken = 0

    def poll(self, timeout_s: float) -> list[Rec]:
        self.script.wait_at_most(lambda events: len(_messages(events)) > self._taken, timeout_s, "a message")
        new = self.script.of_kind("message")[self._taken :]
        self._taken += len(new)
        return [Rec(e["partition"], e["offset"], e["key"], e["value"]) for e in new]

    def assignment(self) -> set[int]:
        joined = self.script.of_kind("joined")
        return set(joined[-1]["assignment"].get(self.topic, [])) if joined else set()

    def commit(self) -> None:
        raise NotImplementedError("consumer.js commits by itself (autoCommit) or not at all")

    def committed(self, partitions: Iterable[int]) -> dict[int, int | None]:
        committed = {
            p["partition"]: p["offset"] for p in self.admin.call("fetchOffsets", group=self.group, topic=self.topic)
        }
        return {p: None if committed.get(p, -1) < 0 else committed[p] for p in partitions}

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The node process stopped (SIGSTOP) until the block ends: it neither heartbeats nor rejoins meanwhile."""
        os.kill(self.script.proc.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.script.proc.pid, signal.SIGCONT)

    def close(self) -> None:
        stop_consumer(self.script, self.tolerated_crashes)


class KafkajsPipeline:
    """consume-transform-produce with kafkajs: a consumer.js member with autoCommit off (read_committed, kafkajs's
    default, said explicitly) and a transactional.js producer; kafkajs sends the group id only with the offsets."""

    def __init__(self, h: Harness, admin: NodeScript, group: str, topic: str, transactional_id: str, name: str) -> None:
        self.group, self.topic = group, topic
        self.producer = h.rpc("transactional.js", f"{name}-producer", transactional_id)
        self.consumer = KafkajsConsumer(h, admin, group, topic, name, autoCommit=False, readUncommitted=False)

    def transaction(self, consumed: Sequence[Rec], output: str, commit: bool) -> list[Rec]:
        records = [transformed(r) for r in consumed]
        partitions = [{"partition": p, "offset": str(offset)} for p, offset in end_offsets(consumed).items()]
        acked = self.producer.call(
            "transaction",
            topic=output,
            messages=[{"key": key, "value": value} for key, value in records],
            group=self.group,
            offsets={"topic": self.topic, "partitions": partitions},
            commit=commit,
        )
        return [Rec(a["partition"], a["offset"], key, value) for a, (key, value) in zip(acked, records, strict=True)]

    def close(self) -> None:
        try:
            self.consumer.close()
        finally:
            assert self.producer.close() == 0, self.producer.stderr_tail()


class KafkajsAdapter:
    """The scenarios' `ClientAdapter` for kafkajs: admin.js, producer.js, and a consumer.js per consumer (which
    commits by itself, kafkajs's autoCommit after each batch)."""

    def __init__(self, bootstrap: str, log_dir: Path) -> None:
        self._stack = contextlib.ExitStack()
        self.h = self._stack.enter_context(harness(bootstrap, log_dir))
        self.admin = self.h.rpc("admin.js", "admin")
        self.producer = self.h.rpc("producer.js", "producer")

    def create_topic(self, topic: str, partitions: int, replicas: int | None = None) -> None:
        """CreateTopics; `replicas` None: the broker's default.replication.factor."""
        factor = {} if replicas is None else {"replicationFactor": replicas}
        assert self.admin.call("createTopic", topic=topic, partitions=partitions, **factor) is True

    def produce(self, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None) -> list[Rec]:
        placed = {} if partition is None else {"partition": partition}
        messages = [{"key": key, "value": value, **placed} for key, value in records]
        acked = self.producer.call("send", topic=topic, messages=messages)
        return [Rec(a["partition"], a["offset"], key, value) for a, (key, value) in zip(acked, records, strict=True)]

    def consumer(
        self, group: str, topic: str, name: str, tolerated_crashes: tuple[str, ...] = (), **options: Any
    ) -> KafkajsConsumer:
        return KafkajsConsumer(self.h, self.admin, group, topic, name, tolerated_crashes, **options)

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        offsets = self.admin.call("fetchOffsets", group=group, topic=topic)
        return {p["partition"]: p["offset"] for p in offsets if p["offset"] >= 0}

    def close(self) -> None:
        self._stack.close()


class KafkajsTxnAdapter(KafkajsAdapter):
    """`txn_scenario.TxnAdapter` for kafkajs."""

    def pipeline(self, group: str, topic: str, transactional_id: str, name: str) -> KafkajsPipeline:
        return KafkajsPipeline(self.h, self.admin, group, topic, transactional_id, name)

    def reader(self, topic: str, name: str, read_committed: bool) -> KafkajsConsumer:
        return KafkajsConsumer(
            self.h, self.admin, unique(f"{name}-group"), topic, name, readUncommitted=not read_committed
        )
