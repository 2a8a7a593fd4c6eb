"""Shared end-to-end scenarios for the Python clients: one consumer-group lifecycle, driven through a small adapter.

Each client module (aiokafka, kafka-python, confluent-kafka) implements `ClientAdapter` with that client's own
producer, consumer and admin APIs; `run_group_lifecycle` then runs the same acceptance scenario against the broker
process:

1. create a 6-partition topic, produce 600 keyed records;
2. three consumers in one group consume until every record is received (nothing lost) and the group is stable
   with each partition owned by exactly one member of the generation;
3. one consumer leaves: the other two take over all six partitions and receive what is produced afterwards;
4. they commit and stop; the committed offsets are read back with the admin API;
5. a new consumer in the group resumes exactly at the committed offsets (its `committed()` agrees) and receives
   only what was produced after the commit.

Nothing here asserts on time: every wait polls a condition with a generous deadline and fails with a diagnostic.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from tests.support.broker_process import BrokerProcess, wait_until

T = TypeVar("T")
C = TypeVar("C", bound="GroupConsumer")

PARTITIONS = 6
FIRST_BATCH = 600
LATER_BATCH = 60
# Small client timeouts keep rebalances quick; the test broker accepts sessions down to 500 ms.
SESSION_TIMEOUT_MS = 3000
HEARTBEAT_INTERVAL_MS = 1000
WAIT_S = 30.0
# What a client's admin API reports for a group without an authorizer: every operation a Kafka 4 group supports.
GROUP_OPERATIONS = frozenset({"READ", "DESCRIBE", "DELETE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"})


def unique(prefix: str) -> str:
    """A topic or group name no other test (or earlier run on the same data dir) uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def keyed(start: int, count: int) -> list[tuple[str, str]]:
    """Records `key-i` / `value-i`: the key decides the partition through the client's own partitioner."""
    return [(f"key-{i}", f"value-{i}") for i in range(start, start + count)]


@dataclass(frozen=True, slots=True)
class Rec:
    """One record as produced (with the partition and offset the broker acknowledged) or as consumed."""

    partition: int
    offset: int
    key: str
    value: str

    @property
    def position(self) -> tuple[int, int]:
        return (self.partition, self.offset)


@dataclass(frozen=True, slots=True)
class GroupView:
    """A group as an admin client describes it: state and each member's assigned partitions of our topic."""

    state: str
    assignments: dict[str, frozenset[int]]


class GroupConsumer(Protocol):
    name: str

    def poll(self, timeout_s: float) -> list[Rec]:
        """Records received in one poll of at most `timeout_s` (may be empty)."""

    def assignment(self) -> set[int]:
        """Partitions of the scenario topic currently assigned to this consumer."""

    def commit(self) -> None:
        """Synchronously commit the consumer's current positions."""

    def committed(self, partitions: Iterable[int]) -> dict[int, int | None]:
        """Committed offsets as the consumer itself reads them (None: nothing committed)."""

    def close(self) -> None: ...


class ClientAdapter(Protocol):
    def create_topic(self, topic: str, partitions: int) -> None: ...

    def produce(self, topic: str, records: Sequence[tuple[str, str]]) -> list[Rec]:
        """Produce keyed records, flush, and return them with the acknowledged partition and offset."""

    def consumer(self, group: str, topic: str, name: str) -> GroupConsumer:
        """A subscribed consumer: auto.offset.reset=earliest, auto-commit off, small session timeout."""

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        """The group's committed offsets of the topic through the admin API (partitions without one left out)."""

    def describe(self, group: str, topic: str) -> GroupView: ...

    def close(self) -> None: ...


# -- consuming ---------------------------------------------------------------------------------------------------


class Opened:
    """The consumers a test opens. Whatever is still open when the block ends, failed or not, is closed, so a
    failing test leaves no client threads or sockets behind (they would trip the next test's warnings check)."""

    def __init__(self, adapter: ClientAdapter) -> None:
        self.adapter = adapter
        self.open: list[GroupConsumer] = []

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        while self.open:
            consumer = self.open.pop()
            with suppress(Exception):  # already failing or done: closing is best effort
                consumer.close()

    def consumer(self, group: str, topic: str, name: str) -> GroupConsumer:
        return self.track(self.adapter.consumer(group, topic, name))

    def track(self, consumer: C) -> C:
        """Take care of a consumer opened some other way (with client-specific options)."""
        self.open.append(consumer)
        return consumer

    def close(self, consumer: GroupConsumer) -> None:
        self.open.remove(consumer)
        consumer.close()


@dataclass
class Pump:
    """Polls several consumers round-robin in this thread and remembers what each one received, in order."""

    consumers: list[GroupConsumer]
    received: dict[str, list[Rec]] = field(default_factory=dict)
    poll_s: float = 0.05
    # Every record with the monotonic time its poll returned and the consumer's name, in the order received.
    journal: list[tuple[float, str, Rec]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for c in self.consumers:
            self.received.setdefault(c.name, [])

    def add(self, consumer: GroupConsumer) -> None:
        self.consumers.append(consumer)
        self.received.setdefault(consumer.name, [])

    def remove(self, consumer: GroupConsumer) -> None:
        self.consumers.remove(consumer)

    def poll_once(self) -> None:
        for c in self.consumers:
            records = c.poll(self.poll_s)
            now = time.monotonic()
            self.received[c.name].extend(records)
            self.journal.extend((now, c.name, r) for r in records)

    def until(self, predicate: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
        """Poll every consumer (each poll waits up to `poll_s`) until the predicate holds."""

        def polled() -> bool:
            self.poll_once()
            return predicate()

        def state() -> str:
            got = {name: len(recs) for name, recs in self.received.items()}
            assignments = {c.name: sorted(c.assignment()) for c in self.consumers}
            return f"received {got}, assignments {assignments}"

        wait_until(polled, timeout_s, interval_s=0, what=what, detail=state)

    def all_received(self) -> list[Rec]:
        return [r for recs in self.received.values() for r in recs]

    def positions(self) -> set[tuple[int, int]]:
        return {r.position for r in self.all_received()}


def end_offsets(*batches: Iterable[Rec]) -> dict[int, int]:
    """The log end offset of every partition that received a record: the offset a caught-up consumer commits."""
    ends: dict[int, int] = {}
    for batch in batches:
        for r in batch:
            ends[r.partition] = max(ends.get(r.partition, 0), r.offset + 1)
    return ends


# -- assertions --------------------------------------------------------------------------------------------------


def assert_nothing_lost(produced: Sequence[Rec], received: Iterable[Rec]) -> None:
    """Every produced (partition, offset) was received, with the key and value that were produced there."""
    by_position = {r.position: r for r in produced}
    received = list(received)
    missing = set(by_position) - {r.position for r in received}
    assert not missing, f"{len(missing)} records never consumed, e.g. {sorted(missing)[:5]}"
    for r in received:
        if r.position in by_position:
            assert r == by_position[r.position], f"consumed {r}, produced {by_position[r.position]}"


def assert_exclusive_cover(assignments: Sequence[Iterable[int]], partitions: int) -> None:
    """Each partition is owned by exactly one member: no partition twice, none missing."""
    owned = Counter(p for a in assignments for p in a)
    assert owned == Counter(range(partitions)), f"ownership {dict(owned)} over {partitions} partitions"


def assert_generation_owned(adapter: ClientAdapter, consumers: Sequence[GroupConsumer], group: str, topic: str) -> None:
    """The clients' own assignments are the generation's (as the admin API describes it) and cover each partition
    exactly once."""
    view = adapter.describe(group, topic)
    assert view.state.lower() == "stable", view
    assert len(view.assignments) == len(consumers), view
    assert_exclusive_cover(list(view.assignments.values()), PARTITIONS)
    client_side = sorted(sorted(c.assignment()) for c in consumers)
    assert client_side == sorted(sorted(a) for a in view.assignments.values()), (client_side, view)


def settled(adapter: ClientAdapter, consumers: Sequence[GroupConsumer], group: str, topic: str) -> bool:
    """The group is Stable with exactly these consumers and every client has applied its share of the assignment."""
    view = adapter.describe(group, topic)
    if view.state.lower() != "stable" or len(view.assignments) != len(consumers):
        return False
    client_side = sorted(sorted(c.assignment()) for c in consumers)
    return client_side == sorted(sorted(a) for a in view.assignments.values())


def commit_and_leave(
    adapter: ClientAdapter,
    opened: Opened,
    consumers: Sequence[GroupConsumer],
    group: str,
    topic: str,
    *consumed: Iterable[Rec],
) -> dict[int, int]:
    """Caught-up consumers commit and close: the admin API reads back the log end offsets of what they `consumed`
    as the group's committed offsets, and the group ends up Empty. Returns those offsets."""
    for c in consumers:
        c.commit()
    expected = end_offsets(*consumed)
    assert adapter.committed_offsets(group, topic) == expected
    for c in consumers:
        opened.close(c)
    wait_until(
        lambda: adapter.describe(group, topic).state.lower() == "empty", WAIT_S, what="the group to become Empty"
    )
    return expected


# -- the broker's own account ------------------------------------------------------------------------------------


def broker_events(broker: BrokerProcess, group: str, event: str | None = None) -> list[dict[str, Any]]:
    """The coordinator's structured events (JSON lines on the broker's stdout) for one group."""
    events = []
    for line in broker.log_lines():
        if not line.startswith("{"):
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("group") == group and (event is None or entry.get("event") == event):
            events.append(entry)
    return events


# What the broker logs when it cannot take a request as a client sent it.
BAD_REQUEST_EVENTS = (
    "request.malformed",
    "connection.closed_on_bad_request",
    "request.handler_failed",
    "response.encode_failed",
)


def assert_broker_accepted_every_request(broker: BrokerProcess, client: str) -> None:
    """No request of the test was malformed, crashed a handler or got an answer that failed to encode."""
    bad = [line for line in broker.log_lines() if any(f'"{event}"' in line for event in BAD_REQUEST_EVENTS)]
    assert not bad, f"broker rejected {client} requests:\n" + "".join(bad[:10])


@contextmanager
def explained_by_broker(broker: BrokerProcess, group: str) -> Iterator[None]:
    """On a failed assertion, attach the coordinator's events for the group (what the broker thought happened)."""
    try:
        yield
    except AssertionError as exc:
        lines = [
            " ".join(f"{k}={v}" for k, v in e.items() if k not in ("timestamp", "level", "group", "peer"))
            for e in broker_events(broker, group)
        ]
        exc.add_note(f"broker events for group {group}:\n" + "\n".join(lines[-60:]))
        raise


def completed_generations(broker: BrokerProcess, group: str) -> list[dict[str, Any]]:
    return broker_events(broker, group, "rebalance.completed")


def broker_generation(broker: BrokerProcess, group: str, view: GroupView, after: int = 0) -> int:
    """Wait until the broker's last completed rebalance of the group is newer than `after` and has exactly the
    members the admin API describes (the broker's output is read by a thread, so a line may lag behind the
    answer a client already got); return that generation."""
    found: list[int] = []

    def matches() -> bool:
        completed = completed_generations(broker, group)
        if not completed:
            return False
        last = completed[-1]
        found[:] = [int(last["generation"])]
        return bool(last["generation"] > after and sorted(last["members"]) == sorted(view.assignments))

    wait_until(
        matches,
        WAIT_S,
        what=f"a rebalance.completed event after generation {after} with members {sorted(view.assignments)}",
    )
    return found[0]


def log_barrier(broker: BrokerProcess, adapter: ClientAdapter) -> None:
    """Wait until the broker's output has been read up to now: create a topic and wait for its creation line.
    Everything the broker logged before it (in order, on one stream) is then in `log_lines()`."""
    marker = unique("log-barrier")
    adapter.create_topic(marker, 1)
    wait_until(
        lambda: any(marker in line for line in broker.log_lines()), WAIT_S, what="the broker's output to catch up"
    )


# -- the lifecycle scenario --------------------------------------------------------------------------------------


def run_group_lifecycle(adapter: ClientAdapter, broker: BrokerProcess, prefix: str) -> None:
    topic, group = unique(f"{prefix}-orders"), unique(f"{prefix}-billing")
    with explained_by_broker(broker, group), Opened(adapter) as opened:
        _lifecycle(adapter, opened, broker, topic, group)


def _lifecycle(adapter: ClientAdapter, opened: Opened, broker: BrokerProcess, topic: str, group: str) -> None:
    adapter.create_topic(topic, PARTITIONS)

    # 1. 600 keyed records over all six partitions.
    produced = adapter.produce(topic, keyed(0, FIRST_BATCH))
    assert len({r.position for r in produced}) == FIRST_BATCH
    assert {r.partition for r in produced} == set(range(PARTITIONS))

    # 2. Three consumers in one group consume everything; the settled generation owns each partition once.
    consumers = [opened.consumer(group, topic, f"c{i}") for i in range(3)]
    pump = Pump(list(consumers))
    wanted = {r.position for r in produced}
    # Nothing is committed yet, so a member given partitions in a later generation reads them from the start:
    # every member receives records.
    pump.until(
        lambda: (
            wanted <= pump.positions()
            and all(pump.received[c.name] for c in consumers)
            and settled(adapter, consumers, group, topic)
        ),
        "three consumers to consume all 600 records in a settled generation",
    )
    assert_nothing_lost(produced, pump.all_received())
    assert pump.positions() == wanted, "received records that were never produced"
    assert_generation_owned(adapter, consumers, group, topic)
    generation = broker_generation(broker, group, adapter.describe(group, topic))

    # 3. One consumer stops (leaving the group): the other two take over all six partitions and keep consuming.
    leaving, staying = consumers[2], consumers[:2]
    pump.remove(leaving)
    opened.close(leaving)
    pump.until(
        lambda: settled(adapter, staying, group, topic),
        "the two remaining consumers to own all six partitions in a new generation",
    )
    assert_generation_owned(adapter, staying, group, topic)
    generation = broker_generation(broker, group, adapter.describe(group, topic), after=generation)
    owners = {p: c.name for c in staying for p in c.assignment()}
    seen = {c.name: len(pump.received[c.name]) for c in staying}
    more = adapter.produce(topic, keyed(FIRST_BATCH, LATER_BATCH))
    # Every partition gets some of them, so receiving them all means every partition is consumed to its end.
    assert {r.partition for r in more} == set(range(PARTITIONS))
    more_positions = {r.position for r in more}
    pump.until(lambda: more_positions <= pump.positions(), "the remaining consumers to receive the new records")
    after_stop = [r for c in staying for r in pump.received[c.name][seen[c.name] :]]
    assert_nothing_lost(more, after_stop)
    new_ones = Counter(r.position for r in after_stop if r.position in more_positions)
    assert set(new_ones.values()) == {1}, "a record produced after the stop was consumed twice"
    for c in staying:
        for r in pump.received[c.name][seen[c.name] :]:
            assert owners[r.partition] == c.name, f"{c.name} consumed {r} from a partition it does not own"
    for c in staying:
        owned = {p for p, owner in owners.items() if owner == c.name}
        assert c.assignment() == owned, "the group rebalanced while the new records were consumed"

    # 4. Commit and stop: the committed offsets are the log end offsets.
    expected = commit_and_leave(adapter, opened, staying, group, topic, produced, more)

    # 5. A new consumer resumes exactly at the committed offsets: it receives only what is produced now.
    later = adapter.produce(topic, keyed(FIRST_BATCH + LATER_BATCH, LATER_BATCH))
    resumed = opened.consumer(group, topic, "c-resumed")
    assert resumed.committed(range(PARTITIONS)) == {p: expected[p] for p in range(PARTITIONS)}
    pump = Pump([resumed])
    later_positions = {r.position for r in later}
    pump.until(lambda: later_positions <= pump.positions(), "the new consumer to receive the later records")
    # Within a partition records arrive in offset order, so anything before the committed offset would have
    # arrived before the later records did.
    assert_nothing_lost(later, pump.all_received())
    assert sorted(r.position for r in pump.all_received()) == sorted(later_positions)
    assert resumed.assignment() == set(range(PARTITIONS))
    assert adapter.committed_offsets(group, topic) == expected  # unchanged: the new consumer did not commit
    opened.close(resumed)


# -- waiting -----------------------------------------------------------------------------------------------------


class ConsumerThread:
    """Runs a blocking consumer's poll loop in a thread of its own, the way an application does (poll, handle,
    poll again), and runs every other call on the consumer (commit, committed, close) in that thread between
    two polls, because a consumer object is not thread-safe.

    `take` hands the records polled so far to the test thread; an exception raised by `poll` is re-raised there.
    """

    def __init__(self, name: str, poll: Callable[[float], list[Rec]], poll_s: float = 0.25) -> None:
        self.name = name
        self._poll = poll
        self._poll_s = poll_s
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._buffer: list[Rec] = []
        self._error: BaseException | None = None
        self._ready = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=f"consumer-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            while not self._calls.empty():
                fn, future = self._calls.get()
                try:
                    future.set_result(fn())
                except BaseException as exc:  # handed to the caller
                    future.set_exception(exc)
            if self._stopping:
                return
            try:
                records = self._poll(self._poll_s)
            except BaseException as exc:  # handed to the test thread by take()
                with self._ready:
                    self._error = exc
                    self._ready.notify_all()
                return
            if records:
                with self._ready:
                    self._buffer.extend(records)
                    self._ready.notify_all()

    def call(self, fn: Callable[[], T], timeout_s: float = WAIT_S) -> T:
        future: Future[T] = Future()
        self._calls.put((fn, future))
        return future.result(timeout_s)

    def take(self, timeout_s: float) -> list[Rec]:
        with self._ready:
            if not self._buffer and self._error is None:
                self._ready.wait(timeout_s)
            if self._error is not None:
                raise AssertionError(f"{self.name}: poll failed") from self._error
            records, self._buffer = self._buffer, []
            return records

    @contextmanager
    def held(self) -> Iterator[None]:
        """No poll until the block ends: the thread waits between two polls (a member that does not rejoin yet)."""
        waiting, release = threading.Event(), threading.Event()

        def hold() -> None:
            waiting.set()
            release.wait(WAIT_S)

        self._calls.put((hold, Future()))
        assert waiting.wait(WAIT_S), f"{self.name}: its poll did not return"
        try:
            yield
        finally:
            release.set()

    def stop(self, last: Callable[[], None]) -> None:
        """Run `last` (closing the consumer) in the consumer's thread, then end the thread."""

        def final() -> None:
            self._stopping = True
            last()

        if self._thread.is_alive():
            self.call(final)
            self._thread.join(WAIT_S)
        else:
            last()


class LoopThread:
    """An asyncio loop in a daemon thread, so an async client can be driven by the synchronous scenario while its
    background tasks (heartbeats, fetches) keep running between calls, as they do in an application."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="client-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float = WAIT_S) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def close(self) -> None:
        async def drain() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.run(drain())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()
