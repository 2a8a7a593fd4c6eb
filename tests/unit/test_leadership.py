"""Replica placement (Kafka's rack-unaware assignment) and the partition table as nodes stop, start and move."""

from __future__ import annotations

import pytest

from broker.leadership import NO_LEADER, LeaderChange, Leadership, PartitionState
from broker.placement import replicas_for

NODES = (0, 1, 2, 3, 4)


def test_placement_is_kafkas_table_for_five_brokers() -> None:
    # The example of AdminUtils.assignReplicasToBrokers' documentation (start index and shift 0): 10 partitions,
    # replication factor 3 over brokers 0-4.
    expected = {
        0: (0, 1, 2),
        1: (1, 2, 3),
        2: (2, 3, 4),
        3: (3, 4, 0),
        4: (4, 0, 1),
        5: (0, 2, 3),
        6: (1, 3, 4),
        7: (2, 4, 0),
        8: (3, 0, 1),
        9: (4, 1, 2),
    }
    assert {p: replicas_for(p, 3, NODES) for p in range(10)} == expected


def test_placement_spreads_leaders_and_uses_the_node_ids_given() -> None:
    assert [replicas_for(p, 1, (1, 2, 3))[0] for p in range(6)] == [1, 2, 3, 1, 2, 3]
    assert replicas_for(7, 1, (5,)) == (5,)


@pytest.mark.parametrize("factor", [0, 4])
def test_placement_refuses_a_factor_the_nodes_cannot_hold(factor: int) -> None:
    with pytest.raises(ValueError, match="replication factor"):
        replicas_for(0, factor, (1, 2, 3))


def test_a_stopped_leader_hands_over_to_the_next_in_sync_replica() -> None:
    table = Leadership((1, 2, 3))
    assert table.state("t", 0, 3) == PartitionState((1, 2, 3), 1, (1, 2, 3))
    changes = table.stop(1, [("t", 0, 3), ("t", 1, 3)])
    assert changes == [LeaderChange("t", 0, 1, 2)]  # t-1 is led by 2: only its ISR shrinks
    assert table.state("t", 0, 3) == PartitionState((1, 2, 3), 2, (2, 3))
    assert table.state("t", 1, 3) == PartitionState((2, 3, 1), 2, (2, 3))


def test_the_last_in_sync_replica_stopping_leaves_no_leader_until_it_is_back() -> None:
    table = Leadership((1, 2, 3))
    assert table.stop(2, [("t", 1, 1)]) == [LeaderChange("t", 1, 2, NO_LEADER)]
    assert table.state("t", 1, 1) == PartitionState((2,), NO_LEADER, (2,))
    assert table.start(2, [("t", 1, 1)]) == [LeaderChange("t", 1, NO_LEADER, 2)]
    assert table.state("t", 1, 1) == PartitionState((2,), 2, (2,))


def test_a_node_that_starts_again_rejoins_the_isr_but_leadership_stays() -> None:
    table = Leadership((1, 2, 3))
    table.stop(1, [("t", 0, 3)])
    assert table.start(1, [("t", 0, 3)]) == []
    assert table.state("t", 0, 3) == PartitionState((1, 2, 3), 2, (1, 2, 3))
    assert table.preferred("t", 0, 3) == LeaderChange("t", 0, 2, 1)
    assert table.preferred("t", 0, 3) is None


def test_a_partition_created_while_a_node_is_down_is_led_by_a_live_replica() -> None:
    table = Leadership((1, 2, 3))
    table.stop(1, [])
    assert table.state("new", 0, 2) == PartitionState((1, 2), 2, (2,))


def test_moves_go_only_to_live_in_sync_replicas() -> None:
    table = Leadership((1, 2, 3))
    assert table.move("t", 0, 2, 2) == LeaderChange("t", 0, 1, 2)
    assert table.move("t", 0, 2, 2) is None
    with pytest.raises(ValueError, match="not a live in-sync replica"):
        table.move("t", 0, 2, 3)
    table.stop(1, [("t", 0, 2)])
    with pytest.raises(ValueError, match="not a live in-sync replica"):
        table.move("t", 0, 2, 1)


def test_a_deleted_topic_is_placed_afresh() -> None:
    table = Leadership((1, 2))
    table.move("t", 0, 2, 2)
    table.forget("t")
    assert table.state("t", 0, 2).leader == 1
