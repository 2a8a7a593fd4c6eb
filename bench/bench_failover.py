"""Failover time (issue #19): the coordinator node of a 10-member group is stopped; how long until every member is
consuming again, per client, in real time and in virtual time. Figures only: nothing fails on time.

A three-node broker runs in this process (`toolkit.embedded`, `cluster.nodes=3`, every partition with three
replicas); a topic of 10 partitions is fed by a producer writing one record to each partition every PRODUCE_EVERY_S
(each record carries the time it was sent). A group of 10 consumers of one client library, with that library's
default settings (session timeout, heartbeat interval, backoffs, auto-commit) except `auto.offset.reset=earliest`,
forms and consumes; once every member has consumed, the node coordinating the group is stopped (its connections
drop, the partitions it led move, its `__consumer_offsets` partitions load on their new leaders), at T0. A member
is back when both:

* it has consumed a record sent after T0 (its fetches found the partitions' new leaders), and
* the group's new coordinator has answered it a Heartbeat or SyncGroup without error (it found its coordinator
  again, rejoining first if its group had to rebalance).

The figures are seconds from T0: the last member back ("every member", the failover time), the median member, and
each half on its own (the last member fetching again, the last one at its new coordinator).

Virtual time: the same run with the broker clock frozen just before the stop (`freeze_time`), as a test using the
toolkit's virtual time runs it. Broker-side timers then fire only when advanced: session expiries cannot happen, so
the figure is what the clients' own timers and the failover itself cost. When the group waits on a broker timer
alone (every member parked in its JoinGroup, `frozen_timer_blocking`'s exact case) the bench advances to it, as a
test would; when the group has stood still for STILL_S with timers pending (kafkajs: its restarted consumers join
as new members while the old ones' sessions can expire only on an advance) it advances to the next timer too. It
reports the virtual milliseconds advanced.

Clients: aiokafka (10 consumers on one event loop), kafka-python and confluent-kafka (a thread per consumer), and
kafkajs (10 consumers in one Node process, `bench/js/failover_members.js`; "n/a" without node or node_modules),
each run on a fresh broker. `BENCH_FAILOVER_CLIENTS=aiokafka,kafka-python,confluent,kafkajs` picks them (all by
default) and
`BENCH_FAILOVER_RUNS=N` repeats each (1 by default, so `make bench` stays short). A run that does not recover
within RUN_TIMEOUT_S prints "n/a" with what was missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.context import RequestContext
from protocol.errors import ErrorCode
from protocol.registry import ApiKey
from toolkit.embedded import EmbeddedBroker
from toolkit.frozen_wait import FrozenWait
from toolkit.handle import GroupBrokerHandle

TOPIC = "failover"
GROUP = "failover-group"
MEMBERS = 10
PRODUCE_EVERY_S = 0.05
FORM_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 90.0
POLL_S = 0.05
STILL_S = 5.0  # virtual runs: a group standing still this long with broker timers pending is advanced to the next
CLOSE_TIMEOUT_S = 10.0
CLIENTS = ("aiokafka", "kafka-python", "confluent", "kafkajs")
ROOT = Path(__file__).resolve().parent.parent
KAFKAJS_MEMBERS = ROOT / "bench" / "js" / "failover_members.js"
BROKER = {
    "cluster.nodes": "3",
    "default.replication.factor": "3",
    "offsets.topic.num.partitions": "10",
    "group.initial.rebalance.delay.ms": "0",  # formation is not what is measured
}
_SENT_AT = struct.Struct(">d")
QUIET = 2  # librdkafka's log level: critical only (it logs every refused connection to the stopped node)


@dataclass
class Progress:
    """What the consumers and the broker saw, written from their threads (appends and stores under the GIL)."""

    consumed: list[int] = field(default_factory=lambda: [0] * MEMBERS)
    #: Per member, when (monotonic s) it first consumed a record sent at or after T0.
    fetching_again: list[float | None] = field(default_factory=lambda: [None] * MEMBERS)
    #: Per member id, when its new coordinator first answered it without error after T0.
    coordinator_again: dict[str, float] = field(default_factory=dict)
    t0: float | None = None
    stopped_node: int | None = None

    def record(self, member: int, value: bytes | None) -> None:
        self.record_sent_at(member, _SENT_AT.unpack(value[: _SENT_AT.size])[0] if value is not None else None)

    def record_sent_at(self, member: int, sent_at: float | None) -> None:
        self.consumed[member] += 1
        t0 = self.t0
        if t0 is not None and sent_at is not None and self.fetching_again[member] is None and sent_at >= t0:
            self.fetching_again[member] = time.monotonic()


class CoordinatorWatch:
    """A request observer on the broker: the first successful Heartbeat or SyncGroup of each member after T0, served
    by a node other than the stopped one (its new coordinator)."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None:
        return

    def request_finished(
        self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed_s: float
    ) -> None:
        progress = self._progress
        if progress.t0 is None or api_key not in (ApiKey.HEARTBEAT, ApiKey.SYNC_GROUP) or response is None:
            return
        if response.error_code == ErrorCode.NONE and ctx.session.node_id != progress.stopped_node:
            progress.coordinator_again.setdefault(request.member_id, time.monotonic())


# -- the clients ---------------------------------------------------------------------------------------------------


class Members:
    """Ten consumers of one client library in the group, consuming into `progress` until `stop`."""

    def __init__(self, bootstrap: str, progress: Progress) -> None:
        self.bootstrap = bootstrap
        self.progress = progress
        self.running = True
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self.running = False
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        for thread in self.threads:  # daemons: a client that hangs while closing cannot hold the bench
            thread.join(max(0.0, deadline - time.monotonic()))


class AiokafkaMembers(Members):
    def start(self) -> None:
        self.threads = [threading.Thread(target=lambda: asyncio.run(self._all()), daemon=True)]
        self.threads[0].start()

    async def _all(self) -> None:
        await asyncio.gather(*(self._member(i) for i in range(MEMBERS)))

    async def _member(self, member: int) -> None:
        from aiokafka import AIOKafkaConsumer

        consumer = AIOKafkaConsumer(
            TOPIC, bootstrap_servers=self.bootstrap, group_id=GROUP, auto_offset_reset="earliest"
        )
        await consumer.start()
        try:
            while self.running:
                batches = await consumer.getmany(timeout_ms=100)
                for records in batches.values():
                    for message in records:
                        self.progress.record(member, message.value)
        finally:
            with contextlib.suppress(TimeoutError):  # see Members.stop
                await asyncio.wait_for(consumer.stop(), CLOSE_TIMEOUT_S)


class ThreadedMembers(Members):
    """A thread per consumer (the blocking clients)."""

    def start(self) -> None:
        self.threads = [threading.Thread(target=self._member, args=(i,), daemon=True) for i in range(MEMBERS)]
        for thread in self.threads:
            thread.start()

    def _member(self, member: int) -> None:
        raise NotImplementedError


class KafkaPythonMembers(ThreadedMembers):
    def _member(self, member: int) -> None:
        from kafka import KafkaConsumer

        consumer = KafkaConsumer(TOPIC, bootstrap_servers=self.bootstrap, group_id=GROUP, auto_offset_reset="earliest")
        try:
            while self.running:
                for records in consumer.poll(timeout_ms=100).values():
                    for message in records:
                        self.progress.record(member, message.value)
        finally:
            consumer.close()


class ConfluentMembers(ThreadedMembers):
    def _member(self, member: int) -> None:
        from confluent_kafka import Consumer

        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": GROUP,
                "auto.offset.reset": "earliest",
                "log_level": QUIET,
            }
        )
        consumer.subscribe([TOPIC])
        try:
            while self.running:
                message = consumer.poll(0.1)
                if message is not None and message.error() is None:
                    self.progress.record(member, message.value())
        finally:
            consumer.close()


class Unavailable(Exception):
    """A client that cannot run on this machine (its row says n/a and why)."""


class KafkajsMembers(Members):
    """The consumers in one Node child (`bench/js/failover_members.js`), reporting each record on its stdout."""

    def start(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise Unavailable("node is not on PATH")
        if not (ROOT / "node_modules" / "kafkajs" / "package.json").is_file():
            raise Unavailable("kafkajs is not in node_modules (npm ci)")
        argv = [node, str(KAFKAJS_MEMBERS), self.bootstrap, TOPIC, GROUP, str(MEMBERS)]
        self._child = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT
        )
        self.threads = [threading.Thread(target=self._read, daemon=True)]
        self.threads[0].start()

    def _read(self) -> None:
        assert self._child.stdout is not None
        for line in self._child.stdout:
            consumed = json.loads(line)
            self.progress.record_sent_at(consumed["member"], consumed["sentAt"])

    def stop(self) -> None:
        self._child.send_signal(signal.SIGTERM)  # every consumer disconnects (LeaveGroup), then the child exits
        try:
            self._child.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()
        super().stop()


MEMBERS_OF: dict[str, type[Members]] = {
    "aiokafka": AiokafkaMembers,
    "kafka-python": KafkaPythonMembers,
    "confluent": ConfluentMembers,
    "kafkajs": KafkajsMembers,
}


class Feed:
    """One record to each partition every PRODUCE_EVERY_S, carrying the time it was sent (confluent-kafka)."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka import Producer

        self._producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "log_level": QUIET})
        self._running = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while self._running:
            sent_at = _SENT_AT.pack(time.monotonic())
            for partition in range(MEMBERS):
                self._producer.produce(TOPIC, sent_at, partition=partition)
            self._producer.poll(0)
            time.sleep(PRODUCE_EVERY_S)

    def stop(self) -> None:
        self._running = False
        self._thread.join(CLOSE_TIMEOUT_S)
        self._producer.flush(CLOSE_TIMEOUT_S)


# -- one run -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    every_member_s: float  # the last member back: fetching again and answered by its new coordinator
    fetching_s: float  # the last member to consume a record sent after the stop
    coordinator_s: float  # the last member answered by its new coordinator
    advanced_ms: int  # virtual time advanced (virtual runs)
    generations: str  # the group's generation before the stop and once every member was back


class TimerAdvance:
    """When a virtual run advances the frozen broker clock, as a test would: at once to the next timer when only a
    timer can move the group (`FrozenWait.exact`), or when the group's state and requests (`fingerprint`) have stood
    still for STILL_S with timers pending."""

    def __init__(self) -> None:
        self.advanced_ms = 0
        self._fingerprint: Hashable = None
        self._since = 0.0

    def due(self, wait: FrozenWait | None, now: float) -> int | None:
        """The milliseconds to advance now (counted in `advanced_ms`), or None."""
        if wait is None or wait.fingerprint != self._fingerprint:
            self._fingerprint, self._since = (None if wait is None else wait.fingerprint), now
            if wait is None or not wait.exact:
                return None
        elif not wait.exact and now - self._since < STILL_S:
            return None
        self._fingerprint, self._since = None, now
        self.advanced_ms += wait.next_advance_ms
        return wait.next_advance_ms


def _until(
    condition: Callable[[], bool], timeout_s: float, what: str, on_wait: Callable[[], None] | None = None
) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        if on_wait is not None:
            on_wait()
        time.sleep(POLL_S)


def run_once(client: str, virtual: bool) -> Result:
    """One failover of a fresh broker's 10-member group of `client` consumers (see the module docstring)."""
    embedded = EmbeddedBroker(BROKER).start()
    progress = Progress()
    members: Members | None = None
    feed: Feed | None = None
    try:
        handle = GroupBrokerHandle(embedded)
        embedded.call(lambda: embedded.broker.create_topic(TOPIC, MEMBERS, {}))
        embedded.call(lambda: embedded.broker.dispatcher.observe(CoordinatorWatch(progress)))
        feed = Feed(embedded.bootstrap_servers)
        starting = MEMBERS_OF[client](embedded.bootstrap_servers, progress)
        starting.start()
        members = starting
        _until(lambda: all(progress.consumed), FORM_TIMEOUT_S, "the group never had every member consuming")
        formed = handle.wait_for_group_blocking(GROUP, state="Stable", members=MEMBERS, timeout_s=FORM_TIMEOUT_S)
        coordinator = handle.coordinator_node(GROUP)
        if virtual:
            handle.freeze_time()
        progress.stopped_node = coordinator
        progress.t0 = t0 = time.monotonic()
        handle.stop_node(coordinator)
        advance = TimerAdvance()

        def advance_if_only_a_timer_can() -> None:
            wait = embedded.call(lambda: embedded.kit.controls.frozen_timer_blocking(GROUP))
            ms = advance.due(wait, time.monotonic())
            if ms is not None:
                handle.advance(ms)

        def back() -> bool:
            return all(progress.fetching_again) and len(progress.coordinator_again) >= MEMBERS

        _until(
            back,
            RUN_TIMEOUT_S,
            f"after {RUN_TIMEOUT_S:.0f} s: {sum(t is not None for t in progress.fetching_again)} members fetching, "
            f"{len(progress.coordinator_again)} at their new coordinator",
            advance_if_only_a_timer_can if virtual else None,
        )
        fetching = max(t - t0 for t in progress.fetching_again if t is not None)
        at_coordinator = sorted(t - t0 for t in progress.coordinator_again.values())[MEMBERS - 1]
        after = handle.group(GROUP)
        generations = f"{formed['generation']} -> {after['generation'] if after is not None else '?'}"
        return Result(max(fetching, at_coordinator), fetching, at_coordinator, advance.advanced_ms, generations)
    finally:
        if members is not None:
            members.stop()
        if feed is not None:
            feed.stop()
        embedded.stop()


def _wanted() -> list[str]:
    names = os.environ.get("BENCH_FAILOVER_CLIENTS")
    wanted = [n.strip() for n in names.split(",") if n.strip()] if names else list(CLIENTS)
    unknown = [n for n in wanted if n not in MEMBERS_OF]
    if unknown:
        raise ValueError(f"BENCH_FAILOVER_CLIENTS: unknown client(s) {unknown}; known: {', '.join(CLIENTS)}")
    return wanted


def _cell(result: Result | str) -> list[str]:
    if isinstance(result, str):
        return [result, "", "", "", ""]
    return [
        f"{result.every_member_s:.2f}",
        f"{result.fetching_s:.2f}",
        f"{result.coordinator_s:.2f}",
        str(result.advanced_ms),
        result.generations,
    ]


def run() -> None:
    for name in ("aiokafka", "kafka"):  # the clients log every refused connection to the stopped node
        logging.getLogger(name).setLevel(logging.CRITICAL)
    runs = int(os.environ.get("BENCH_FAILOVER_RUNS", "1"))
    headers = ["client", "time", "every member s", "fetching s", "coordinator s", "advanced ms", "generation"]
    rows: list[list[str]] = []
    for client in _wanted():
        for virtual in (False, True):
            for _ in range(runs):
                try:
                    outcome: Result | str = run_once(client, virtual)
                except (TimeoutError, Unavailable) as exc:
                    outcome = f"n/a ({exc})"
                rows.append([client, "virtual" if virtual else "real", *_cell(outcome)])
                print(f"  {' '.join(rows[-1])}", flush=True)
    print(
        f"Failover: the coordinator node of a {MEMBERS}-member group stopped (3 nodes, replication factor 3), until "
        "every member consumes a record sent after the stop and has been answered by its new coordinator; default "
        f"client settings; {runs} run(s) each (BENCH_FAILOVER_RUNS)"
    )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    for line in [headers, *rows]:
        print("  " + "  ".join(value.rjust(width) for value, width in zip(line, widths, strict=True)))


if __name__ == "__main__":
    run()
