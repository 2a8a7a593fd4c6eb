"""kafkajs (2.2.4) on a three-node group-broker (issue #19): its multi-broker expectations, as kafkajs's own suite
has them against three brokers.

- Its consumer group keeps consuming, with nothing lost and nothing twice, and resumes at the committed offsets
  while the coordinator's node stops and starts, in steady state and during a rebalance (`failover_scenario`).
- Bootstrapped from one node, it finds its group's coordinator on another node (FindCoordinator names it; kafkajs
  connects to a broker it learned of from the cluster) and follows the coordinator when that node fails over.

The node side is tests/e2e/js (`consumer.js` with its short timeouts, `admin.js`, `producer.js`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cluster_nodes import ThreeNodes
from tests.e2e.failover_scenario import PARTITIONS, Failover
from tests.e2e.kafkajs_client import STOPPED_NODE_CRASHES, KafkajsAdapter, KafkajsConsumer, node
from tests.e2e.scenario import Pump, assert_nothing_lost, broker_events, end_offsets, explained_by_broker, keyed, unique
from tests.support.broker_process import wait_until

pytestmark = pytest.mark.integration


# consumer.js's own timeouts made shorter still: a consumer crashed by its coordinator's stopped node restarts after
# a few quick retries, and the member it was expires soon (the group waits for it to rejoin until then).
QUICK = {
    "sessionTimeout": 2000,
    "heartbeatInterval": 300,
    "retry": {"initialRetryTime": 100, "maxRetryTime": 300, "retries": 3},
}


class QuickKafkajs:
    """The kafkajs adapter whose consumers have the `QUICK` options."""

    def __init__(self, adapter: KafkajsAdapter) -> None:
        self._adapter = adapter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)

    def consumer(self, group: str, topic: str, name: str) -> KafkajsConsumer:
        return self._adapter.consumer(group, topic, name, STOPPED_NODE_CRASHES, **QUICK)


@pytest.fixture
def kafkajs(cluster: ThreeNodes, tmp_path: Path) -> Iterator[KafkajsAdapter]:
    node()  # fail at once, clearly, without node or kafkajs
    adapter = KafkajsAdapter(cluster.bootstrap, tmp_path)
    yield adapter
    adapter.close()


def test_kafkajs_group_survives_its_coordinators_node_stopping(kafkajs: KafkajsAdapter, cluster: ThreeNodes) -> None:
    Failover(QuickKafkajs(kafkajs), cluster, "js", commits_itself=True, restarts=True).run()


def _serving_node(cluster: ThreeNodes, group: str, event: str) -> int | None:
    """The node that served the group's last `event` (each connection's events carry the node it came in on)."""
    found = [e for e in broker_events(cluster.broker, group, event) if "node" in e]
    return int(found[-1]["node"]) if found else None


def test_kafkajs_finds_its_coordinator_on_another_node_and_follows_it(
    kafkajs: KafkajsAdapter, cluster: ThreeNodes, tmp_path: Path
) -> None:
    topic, group = unique("js-coordinator"), unique("js-coordinator-group")
    kafkajs.create_topic(topic, PARTITIONS)
    bootstrap_node = 1
    coordinator = cluster.other_node(bootstrap_node)
    cluster.move_group_coordinator(group, coordinator)
    # A consumer that knows only node 1: FindCoordinator there names the other node, where it joins.
    (tmp_path / "one-node").mkdir()
    alone = KafkajsAdapter(cluster.node_bootstrap(bootstrap_node), tmp_path / "one-node")
    with explained_by_broker(cluster.broker, group):
        try:
            member = alone.consumer(group, topic, "js-one-node", STOPPED_NODE_CRASHES, **QUICK)
            pump = Pump([member])
            produced = kafkajs.produce(topic, keyed(0, 30))
            pump.until(lambda: {r.position for r in produced} <= pump.positions(), "the member to consume")
            assert _serving_node(cluster, group, "member.joined") == coordinator
            expected = end_offsets(produced)
            wait_until(lambda: kafkajs.committed_offsets(group, topic) == expected, what=f"commits of {expected}")
            before_stop = {r.position for r in produced}
            # Its coordinator's node stops: kafkajs looks the coordinator up again and commits there.
            cluster.stop_node(coordinator)
            moved = cluster.coordinator_node(group)
            assert moved not in (coordinator, -1)
            produced += kafkajs.produce(topic, keyed(30, 30))
            expected = end_offsets(produced)
            pump.until(
                lambda: (
                    {r.position for r in produced} <= pump.positions()
                    and kafkajs.committed_offsets(group, topic) == expected
                ),
                "the member to consume and commit through the new coordinator",
            )
            wait_until(lambda: _serving_node(cluster, group, "offsets.committed") == moved, what="the commit's node")
            assert_nothing_lost(produced, pump.all_received())
            # Only what it consumed after its last commit before the stop comes again (its restart, kafkajs#253).
            reread = Counter(r.position for r in pump.all_received()) - Counter(r.position for r in produced)
            assert not set(reread) & before_stop, sorted(reread)
            member.close()
        finally:
            alone.close()
