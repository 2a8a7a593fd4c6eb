"""The toolkit's view of KIP-848 consumer groups: the snapshot `group()` answers, and what a frozen-time wait on
one is blocked by.

A consumer group has no generation and no rebalance barrier: it has a group epoch, a target assignment computed
at an assignment epoch, and members walking to their targets one heartbeat at a time. The snapshot keeps the keys
a classic group's has (`state`, `generation` = the group epoch, `members`, `waiting_for`) so that `wait_for_group`
and the control API treat both types alike, and adds the epochs and, per member, its current, pending-revocation
and target partitions. `waiting_for` is in sentences: "waiting for member X to revoke partitions Y", "member X
waits for partitions Y held by Z".
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from coordinator.consumer_group.keys import revocation_key, session_key
from coordinator.consumer_group.target import preferred_assignor
from coordinator.consumer_group.views import reconciliation_waits
from toolkit.frozen_wait import FrozenWait, PendingTimer

if TYPE_CHECKING:
    from coordinator.coordinator import GroupCoordinator

QUIET_HEARTBEATS = 1.5
"""A frozen-time wait on a consumer group gives up only after this many heartbeat intervals without a request:
consumer-protocol clients heartbeat every `group.consumer.heartbeat.interval.ms` (5 s by default, longer than the
classic clients' 3 s), in real time."""


def consumer_group_snapshot(coordinator: GroupCoordinator, group_id: str) -> dict[str, Any] | None:
    group = coordinator.consumer_group(group_id)
    if group is None:
        return None
    views = coordinator.consumer_member_views(group_id)
    return {
        "group_id": group_id,
        "group_type": "consumer",
        "state": group.state.value,
        "generation": group.group_epoch,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "protocol_type": group.protocol_type,
        "protocol": preferred_assignor(group, coordinator.config.consumer_group_assignors),
        "leader": None,
        "members": [v.member_id for v in views],
        "waiting_for": reconciliation_waits(views),
        "member_details": [
            {
                "member_id": v.member_id,
                "group_instance_id": v.instance_id,
                "client_id": v.client_id,
                "client_host": v.client_host,
                "member_epoch": v.member_epoch,
                "member_state": v.state,
                "assigned": v.assigned,
                "pending_revocation": v.pending_revocation,
                "target": v.target,
                "waits_for": v.waits_for,
                "session_deadline_ms": v.session_deadline_ms,
                "revocation_deadline_ms": v.revocation_deadline_ms,
            }
            for v in views
        ],
    }


def consumer_frozen_wait(coordinator: GroupCoordinator, group_id: str, now_ms: int, requests: int) -> FrozenWait | None:
    """The consumer group's pending timers (sessions, revocation timeouts) under frozen time, or None (see
    `BrokerControls.frozen_timer_blocking`). Never `exact`: only the members' own heartbeats move the group."""
    group = coordinator.consumer_group(group_id)
    if group is None:
        return None
    keys: list[tuple[str, Hashable]] = []
    for member_id in group.members:
        keys.append((f"session of member {member_id}", session_key(group_id, member_id)))
        keys.append((f"revocation timeout of member {member_id}", revocation_key(group_id, member_id)))
    timer = coordinator.timer
    deadlines = [(what, when) for what, key in keys if (when := timer.deadline(key)) is not None]
    if not deadlines or any(when <= now_ms for _, when in deadlines):
        return None
    views = coordinator.consumer_member_views(group_id)
    fingerprint = (
        group.state.value,
        group.group_epoch,
        group.assignment_epoch,
        tuple((v.member_id, v.member_epoch, v.state) for v in views),
        requests,
    )
    return FrozenWait(
        group_id,
        group.state.value,
        group.group_epoch,
        tuple(PendingTimer(what, when - now_ms) for what, when in deadlines),
        exact=False,
        fingerprint=fingerprint,
        assignment_epoch=group.assignment_epoch,
        waits=tuple(reconciliation_waits(views)),
        min_grace_s=QUIET_HEARTBEATS * coordinator.config.consumer_group_heartbeat_interval_ms / 1000,
    )
