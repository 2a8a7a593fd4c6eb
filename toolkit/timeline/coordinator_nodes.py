"""Coordinator moves in the timelines (a several-node cluster, `cluster.nodes`): when the leadership of a
`__consumer_offsets` or `__transaction_state` partition moves, every group or transactional id of that partition
the timelines know gets a `coordinator.moved` event saying from which node to which, with the new leader epoch and
why (`node 2 stopped`, `node 2 started`, `moved`).

That is what a client of the group saw: its coordinator went away (NOT_COORDINATOR, or its connection dropped with
the node), and the next FindCoordinator named another node, which loaded the group (COORDINATOR_LOAD_IN_PROGRESS
meanwhile). Read beside the node each request was served by (every request event carries its `node`), it explains
a rebalance or a retried commit after a failover. The events come from the node control's `EventTap`
(`broker.node_control.NodeControl.events`); ids the timelines have not seen yet get nothing (their timeline starts
with their first request).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from broker.offsets_log import OFFSETS_TOPIC
from broker.transaction_state_log import TRANSACTION_STATE_TOPIC
from toolkit.timeline.model import Timeline
from toolkit.timeline.transactions import TransactionTimeline

COORDINATOR_MOVED = "coordinator.moved"
_CAUSES = {"node_stopped": "node {before} stopped", "node_started": "node {after} started", "moved": "moved"}


def _reason(fields: dict[str, Any]) -> str:
    """Why the coordinator moved, as a sentence fragment (`node 2 stopped`)."""
    cause = str(fields.get("cause", "moved"))
    return _CAUSES.get(cause, cause).format(before=fields["leader_before"], after=fields["leader"])


class CoordinatorNodes:
    """A sink for the node control's events: coordinator moves into the group and transaction timelines."""

    def __init__(
        self,
        groups: Timeline,
        transactions: TransactionTimeline,
        group_partition: Callable[[str], int],
        transaction_partition: Callable[[str], int],
    ) -> None:
        """`group_partition` / `transaction_partition`: the coordinator partition of a group id / transactional id."""
        self._groups = groups
        self._transactions = transactions
        self._group_partition = group_partition
        self._transaction_partition = transaction_partition

    def on_event(self, event: str, fields: dict[str, Any]) -> None:
        if event != "partition.leader_changed":
            return
        topic, partition = fields["topic"], fields["partition"]
        moved = {
            "partition": partition,
            "node_before": fields["leader_before"],
            "node": fields["leader"],
            "leader_epoch": fields.get("leader_epoch"),
            "reason": _reason(fields),
        }
        if topic == OFFSETS_TOPIC:
            for group_id in self._groups.group_ids():
                if self._group_partition(group_id) == partition:
                    self._groups.on_event(COORDINATOR_MOVED, {"group": group_id, **moved})
        elif topic == TRANSACTION_STATE_TOPIC:
            for transactional_id in self._transactions.transactional_ids():
                if self._transaction_partition(transactional_id) == partition:
                    self._transactions.on_event(COORDINATOR_MOVED, {"transactional_id": transactional_id, **moved})
