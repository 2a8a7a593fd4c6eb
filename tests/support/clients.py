"""Real clients driven until a condition holds: every wait is bounded (`wait_until`, failing at its deadline with
what it waited for and the client's own view) and every client is closed when its test is done, even when the wait
fails or pytest-timeout interrupts it: an abandoned client's sockets would otherwise be garbage-collected in a later
test, whose ResourceWarning (an error under `filterwarnings = error`) would then fail that innocent test.

kafka-python (3.0.12, the newest; 2.3 the same way) drops the result of a rejoin that its consumer coordinator asked
for itself. `KafkaConsumer.poll()` joins only while `need_rejoin()` is true, and `join_group_async` applies the
JoinGroup+SyncGroup result (the assignment, heartbeats back on) only while a `poll()` waits on that task. A
metadata-driven rejoin clears `need_rejoin()` when the leader computes the assignment (`_perform_assignment` sets
`_assignment_snapshot`), before its SyncGroup is answered: if the poll's timeout ends first, no later poll waits for
the task again. The member then stays REBALANCING with heartbeats disabled and no assignment, polls return at once,
and the coordinator expires it after its session timeout. Kafka's Java consumer guards this with
`rejoinNeededOrPending()` (rejoinNeeded || joinFuture != null). A consumer whose partitions are not in its metadata
yet when it first joins hits exactly this: as leader it assigns nothing ("No partition metadata for topic"), then
rejoins when the metadata arrives, and a loaded machine makes that SyncGroup outlast a 100 ms poll. Hence
`subscribed_consumer` fetches the topics' partitions before the first poll: the first rebalance then assigns them
all, and a first join is safe (its `need_rejoin()` stays true until a poll applies the result).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from aiokafka import AIOKafkaConsumer
from kafka import KafkaConsumer

from tests.support.broker_process import wait_until, wait_until_async

POLL_MS = 100
"""How long one poll of a waiting test may block: short, so the deadline is checked often."""


@contextmanager
def kafka_python_member(
    bootstrap: str, topics: Sequence[str], group_id: str, timeout_s: float = 20.0, **config: Any
) -> Iterator[KafkaConsumer]:
    """A kafka-python consumer subscribed to `topics` in `group_id`, yielded once it has its assignment; closed (it
    leaves the group) when the block ends."""
    consumer = subscribed_consumer(topics, bootstrap_servers=bootstrap, group_id=group_id, **config)
    try:
        wait_until(
            consumer.assignment,
            timeout_s,
            what=f"kafka-python to join {group_id!r} with an assignment",
            detail=lambda: _kafka_python_view(consumer),
            step=lambda: consumer.poll(timeout_ms=POLL_MS),
        )
        yield consumer
    finally:
        consumer.close()


def subscribed_consumer(topics: Sequence[str], **config: Any) -> KafkaConsumer:
    """A KafkaConsumer subscribed to `topics` whose partitions are in its metadata before its first poll joins the
    group, so that its first rebalance assigns them and no metadata-driven rejoin (the one kafka-python can drop, see
    above) follows. Closed if they cannot be found."""
    consumer = KafkaConsumer(*topics, **config)
    try:
        for topic in topics:
            assert consumer.partitions_for_topic(topic), f"kafka-python found no partitions of {topic!r}"
    except BaseException:
        consumer.close()
        raise
    return consumer


def _kafka_python_view(consumer: KafkaConsumer) -> str:
    """The consumer's own view of its group: REBALANCING with `need_rejoin()` false is the dropped rejoin above."""
    coordinator = consumer._coordinator
    return (
        f"kafka-python sees: state {coordinator.state}, need_rejoin {coordinator.need_rejoin()}, "
        f"assignment {sorted(consumer.assignment())}"
    )


async def aiokafka_until(
    consumer: AIOKafkaConsumer,
    predicate: Callable[[], object],
    timeout_s: float = 20.0,
    *,
    what: str = "a condition",
    detail: Callable[[], str] | None = None,
) -> None:
    """Poll an aiokafka consumer until the condition holds."""
    await wait_until_async(predicate, timeout_s, what=what, detail=detail, step=aiokafka_poll(consumer))


def aiokafka_poll(consumer: AIOKafkaConsumer) -> Callable[[], Awaitable[object]]:
    """One poll of an aiokafka consumer, the step of a wait: it joins and rebalances only inside `getmany`."""
    return lambda: consumer.getmany(timeout_ms=POLL_MS // 2)
