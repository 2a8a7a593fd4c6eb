"""The coordinator failover flow of issue #19, run by each client against a three-node group-broker
(`cluster_nodes.ThreeNodes`), through the scenarios' `ClientAdapter` / `GroupConsumer`:

1. steady state: a member consumes and commits; its coordinator's node stops; records produced meanwhile are all
   consumed, once each, and committed through the group's new coordinator; the node starts again;
2. during a rebalance: a second member joins, and while the group waits for the first member to rejoin
   (PreparingRebalance, the first one held out of its poll loop), the coordinator's node stops: both members end up
   in one generation on the new coordinator, sharing the partitions, and consume what follows once each;
3. resume: the members commit and leave; a new member resumes exactly at the committed offsets.

Nothing is lost anywhere and nothing is consumed twice: every commit is made when the members are caught up, so no
rebalance hands a partition over behind its commit. Nothing asserts on time; every wait has a deadline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from tests.e2e.cluster_nodes import NODES, ThreeNodes
from tests.e2e.scenario import (
    ClientAdapter,
    GroupConsumer,
    Opened,
    Pump,
    Rec,
    assert_nothing_lost,
    end_offsets,
    explained_by_broker,
    keyed,
    unique,
)
from tests.support.broker_process import wait_until

PARTITIONS = 3
BATCH = 30
WAIT_S = 30.0


class HeldConsumer(GroupConsumer, Protocol):
    def held(self) -> AbstractContextManager[None]:
        """Keep the member from rejoining a rebalance until the block ends (it stays a member meanwhile)."""


class FailoverAdapter(ClientAdapter, Protocol):
    def create_topic(self, topic: str, partitions: int, replicas: int = 1) -> None: ...

    def consumer(self, group: str, topic: str, name: str) -> HeldConsumer: ...


@dataclass
class Failover:
    """One client's run of the flow. `commits_itself`: the client commits on its own after each batch (kafkajs's
    autoCommit), so the flow waits for its commits instead of asking for them. `restarts`: the client's consumer
    restarts when its coordinator's node is gone (kafkajs: a heartbeat to the stopped node is refused until its
    retries run out, the consumer crashes and restarts as a new member, kafkajs#253), so it reads again from the
    committed offsets what it consumed after its last commit: records produced once the first node stopped may come
    twice (which restart read them again is not for the flow to tell), never one committed before."""

    adapter: FailoverAdapter
    cluster: ThreeNodes
    prefix: str
    commits_itself: bool = False
    restarts: bool = False

    def run(self) -> None:
        topic, group = unique(f"{self.prefix}-failover"), unique(f"{self.prefix}-failover-group")
        self.topic, self.group = topic, group
        self.adapter.create_topic(topic, PARTITIONS, replicas=NODES)
        with explained_by_broker(self.cluster.broker, group), Opened(self.adapter) as opened:
            first = self._track(opened, "first")
            pump = Pump([first])
            produced = self._produce(0)
            self._consume(pump, produced, "the first member to consume the first records")
            self._commit(pump, produced)
            committed = list(produced)
            self._steady_state(pump, produced, committed)
            second = self._during_rebalance(opened, pump, first, produced, committed)
            for member in (first, second):
                pump.remove(member)
                opened.close(member)
            self._resume(opened, produced)

    def _track(self, opened: Opened, name: str) -> HeldConsumer:
        return opened.track(self.adapter.consumer(self.group, self.topic, f"{self.prefix}-{name}"))

    def _produce(self, batch: int) -> list[Rec]:
        records = self.adapter.produce(self.topic, keyed(batch * BATCH, BATCH))
        assert {r.partition for r in records} == set(range(PARTITIONS)), "every partition gets records"
        return records

    def _consume(self, pump: Pump, records: Sequence[Rec], what: str) -> None:
        wanted = {r.position for r in records}
        pump.until(lambda: wanted <= pump.positions(), what, WAIT_S)

    def _commit(self, pump: Pump, produced: Sequence[Rec]) -> None:
        """Caught-up members commit until the group's committed offsets are the log end offsets, as a member reads
        them through its own coordinator (an admin client may still wait for the stopped node: librdkafka's caches
        the coordinator it found and waits for it to come back)."""
        expected: dict[int, int | None] = {p: None for p in range(PARTITIONS)} | end_offsets(produced)
        member = pump.consumers[0]

        def step() -> None:
            if not self.commits_itself:
                for each in pump.consumers:
                    each.commit()
            pump.poll_once()

        seen: dict[str, Any] = {}

        def committed() -> bool:
            seen["committed"] = member.committed(range(PARTITIONS))
            return seen["committed"] == expected

        wait_until(committed, WAIT_S, what=f"commits of {expected}", detail=lambda: str(seen), step=step)

    def _stop_coordinator(self) -> int:
        """Stop the group's coordinator node; the group moves to a running node. Returns the stopped node."""
        failed = self.cluster.coordinator_node(self.group)
        self.cluster.stop_node(failed)
        assert self.cluster.coordinator_node(self.group) not in (failed, -1)
        return failed

    def _assert_once(self, pump: Pump, committed: Sequence[Rec]) -> None:
        """Nothing consumed twice; for a consumer that `restarts`, nothing `committed` before the first stop."""
        counts = Counter(r.position for r in pump.all_received())
        twice = {position for position, count in counts.items() if count > 1}
        if self.restarts:
            twice &= {r.position for r in committed}
        who = [(round(t, 2), name, r.position) for t, name, r in pump.journal if r.position in twice]
        assert not twice, f"consumed more than once: {sorted(twice)[:10]}, by {who[:20]}"

    def _steady_state(self, pump: Pump, produced: list[Rec], committed: Sequence[Rec]) -> None:
        failed = self._stop_coordinator()
        produced += self._produce(1)
        self._consume(pump, produced, "the member to consume what was produced after its coordinator's node stopped")
        self._commit(pump, produced)
        self.cluster.start_node(failed)
        assert_nothing_lost(produced, pump.all_received())
        self._assert_once(pump, committed)

    def _during_rebalance(
        self, opened: Opened, pump: Pump, first: HeldConsumer, produced: list[Rec], committed: Sequence[Rec]
    ) -> HeldConsumer:
        pump.remove(first)
        with first.held():
            # The second member's JoinGroup opens a rebalance that waits for the first member to rejoin.
            second = self._track(opened, "second")
            pump.add(second)
            self.cluster.wait_group_state(self.group, "PreparingRebalance", step=pump.poll_once)
            failed = self._stop_coordinator()
        pump.add(first)
        members = [first, second]
        pump.until(lambda: self._settled(members), "both members to share the partitions on the new coordinator")
        owners = {p: m.name for m in members for p in m.assignment()}
        later = self._produce(2)
        produced += later
        self._consume(pump, later, "both members to consume what was produced after the rebalance")
        self._commit(pump, produced)
        self.cluster.start_node(failed)
        assert_nothing_lost(produced, pump.all_received())
        self._assert_once(pump, committed)
        if self.restarts:
            return second
        wanted = {r.position for r in later}
        for member in members:
            mine = {r.partition for r in pump.received[member.name] if r.position in wanted}
            assert mine <= {p for p, owner in owners.items() if owner == member.name}, (member.name, owners)
        return second

    def _settled(self, members: Sequence[HeldConsumer]) -> bool:
        """The coordinator has the group Stable with these members, and their assignments split the partitions."""
        group = self.cluster.group(self.group)
        if group is None or group["state"] != "Stable" or len(group["members"]) != len(members):
            return False
        owned = Counter(p for m in members for p in m.assignment())
        return owned == Counter(range(PARTITIONS)) and all(m.assignment() for m in members)

    def _resume(self, opened: Opened, produced: list[Rec]) -> None:
        """A new member starts at the committed offsets: it receives exactly what is produced now."""
        later = self._produce(3)
        resumed = self._track(opened, "resumed")
        assert resumed.committed(range(PARTITIONS)) == end_offsets(produced)
        pump = Pump([resumed])
        self._consume(pump, later, "a new member to consume the records produced after the commits")
        assert_nothing_lost(later, pump.all_received())
        assert sorted(r.position for r in pump.all_received()) == sorted(r.position for r in later)
