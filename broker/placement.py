"""Where a partition's replicas live: Kafka's rack-unaware replica assignment, made deterministic.

Kafka's controller places a new topic's replicas round-robin over the brokers (`AdminUtils.assignReplicasToBrokers
RackUnaware`, kept in KRaft's placer for racks it does not know): partition p's first replica (its preferred leader)
is broker `(p + start) % n`, and each further replica is shifted by an amount that grows by one every n partitions,
so that followers spread too. Kafka picks `start` and the first shift at random per topic; a test cluster wants the
same answer on every run, so both are 0 here. Every partition's replicas follow from its index alone, which is what
Kafka computes for all the partitions of a topic at once.
"""

from __future__ import annotations

from collections.abc import Sequence


def replicas_for(partition: int, replication_factor: int, nodes: Sequence[int]) -> tuple[int, ...]:
    """The replicas of `partition`, preferred leader first; `replication_factor` is at most `len(nodes)`."""
    count = len(nodes)
    if not 1 <= replication_factor <= count:
        raise ValueError(f"replication factor {replication_factor} with {count} node(s)")
    first = partition % count
    shift = partition // count  # Kafka's nextReplicaShift: one more every time the partitions wrap round the nodes
    followers = (nodes[(first + 1 + (shift + j) % (count - 1)) % count] for j in range(replication_factor - 1))
    return (nodes[first], *followers)
