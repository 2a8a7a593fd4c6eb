"""The live part of a timeline view: what the group is doing now, its lanes and its rebalance periods."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coordinator.keys import join_key, sync_key
from toolkit.consumer_groups import consumer_group_snapshot
from toolkit.timeline.labels import REBALANCING_STATES, RECONCILING_STATES

if TYPE_CHECKING:
    from coordinator.coordinator import GroupCoordinator
    from toolkit.timeline.model import TimelineEvent, _Pending

PERIOD_STARTS = frozenset({"rebalance.started", "group.epoch"})


def live_state(coordinator: GroupCoordinator, group_id: str, now_ms: int) -> dict[str, Any] | None:
    """What the group is doing now: members, who the rebalance waits for and when every relevant timer fires."""
    group = coordinator.group(group_id)
    if group is None:
        return consumer_live_state(coordinator, group_id, now_ms)
    members = coordinator.member_views(group_id)
    waiting = set(coordinator.waiting_for(group_id))
    timer = coordinator.timer

    def fires(deadline: int | None) -> int | None:
        return None if deadline is None else deadline - now_ms

    join_deadline = timer.deadline(join_key(group_id))
    sync_deadline = timer.deadline(sync_key(group_id))
    member_rows = [
        {
            "member_id": m.member_id,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "group_instance_id": m.group_instance_id,
            "awaiting_join": m.awaiting_join,
            "awaiting_sync": m.awaiting_sync,
            "session_deadline_ms": m.session_deadline_ms,
            "session_fires_in_ms": fires(m.session_deadline_ms),
            "waited_for": m.member_id in waiting,
        }
        for m in members
    ]
    return {
        "group_type": "classic",
        "state": group.state.value,
        "generation": group.generation_id,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol_name,
        "leader": group.leader_id,
        "members": member_rows,
        "waiting_for": [row for row in member_rows if row["waited_for"]],
        "rebalance_deadline_ms": join_deadline,
        "rebalance_fires_in_ms": fires(join_deadline),
        "sync_deadline_ms": sync_deadline,
        "sync_fires_in_ms": fires(sync_deadline),
    }


def consumer_live_state(coordinator: GroupCoordinator, group_id: str, now_ms: int) -> dict[str, Any] | None:
    """A KIP-848 consumer group now: its epochs and, per member, its epoch, state, current, pending-revocation and
    target partitions, and its timers. It has no rebalance barrier: `waiting_for` is the members that owe a
    revocation (the group waits for their next heartbeat, or for their revocation timeout), and `reconciliation`
    says in sentences who waits for whom. The classic keys stay (`generation` is the group epoch, no leader, no
    group timers) so that the renderers read both types alike."""
    snapshot = consumer_group_snapshot(coordinator, group_id)
    if snapshot is None:
        return None
    rows = []
    for details in snapshot["member_details"]:
        row = dict(details)
        for timer in ("session", "revocation"):
            deadline = row[f"{timer}_deadline_ms"]
            row[f"{timer}_fires_in_ms"] = None if deadline is None else deadline - now_ms
        row["waited_for"] = bool(row["pending_revocation"])
        rows.append(row)
    return {
        "group_type": "consumer",
        "state": snapshot["state"],
        "generation": snapshot["group_epoch"],
        "group_epoch": snapshot["group_epoch"],
        "assignment_epoch": snapshot["assignment_epoch"],
        "protocol_type": snapshot["protocol_type"],
        "protocol": snapshot["protocol"],
        "leader": None,
        "members": rows,
        "waiting_for": [row for row in rows if row["waited_for"]],
        "reconciliation": snapshot["waiting_for"],
        "rebalance_deadline_ms": None,
        "rebalance_fires_in_ms": None,
        "sync_deadline_ms": None,
        "sync_fires_in_ms": None,
    }


def lanes(events: list[TimelineEvent], pending: list[_Pending], live: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One lane per member, in order of first appearance; current members that left no event still get one."""
    lanes: dict[str, str | None] = {}
    for e in events:
        if e.member and (e.member not in lanes or (lanes[e.member] is None and e.client_id)):
            lanes[e.member] = e.client_id
    for p in pending:
        lanes.setdefault(p.member or new_member_lane(p.client_id), p.client_id)
    for m in (live or {}).get("members", []):
        # a member loaded at restart has left no request here: its client id is the one its record carried
        if lanes.get(m["member_id"]) is None:
            lanes[m["member_id"]] = m["client_id"]
    return [{"member": member, "client_id": client} for member, client in lanes.items()]


def new_member_lane(client_id: str | None) -> str:
    return f"(new member of {client_id})"


def rebalances(events: list[TimelineEvent], live: dict[str, Any] | None, now_ms: int) -> list[dict[str, Any]]:
    """Rebalance periods: from `rebalance.started` (or a move to PreparingRebalance), or for a consumer group from
    a group epoch bump (`group.epoch`, its reason), until the group is Stable (outcome "completed", generation the
    classic generation or the group epoch) or Empty/Dead again; one still open has `end_ms` None."""
    periods: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for e in events:
        new_state = e.detail.get("new_state") if e.kind == "group.state" and e.detail else None
        if e.kind in PERIOD_STARTS or new_state == "PreparingRebalance":
            if current is None:
                current = {"start_ms": e.at_ms, "end_ms": None, "reasons": [], "generation": None, "outcome": None}
                periods.append(current)
            if e.kind in PERIOD_STARTS and e.reason:
                current["reasons"].append(e.reason)
        elif current is not None and new_state in ("Stable", "Empty", "Dead"):
            outcome = "completed" if new_state == "Stable" else new_state
            current.update(end_ms=e.at_ms, generation=e.generation, outcome=outcome)
            current = None
        elif e.kind == "rebalance.completed" and periods:  # follows the move to Stable
            if current is not None:
                current.update(end_ms=e.at_ms, outcome="completed")
                current = None
            periods[-1].update(generation=e.generation, duration_ms=(e.detail or {}).get("duration_ms"))
    if current is None and live is not None and live["state"] in (*REBALANCING_STATES, *RECONCILING_STATES):
        # the start was pushed out of the bounded log: the rebalance is still on, from before the first event
        start = events[0].at_ms if events else now_ms
        periods.append({"start_ms": start, "end_ms": None, "reasons": [], "generation": None, "outcome": None})
    return periods
