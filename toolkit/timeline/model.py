"""The rebalance timeline of each group: who sent which group request when, and what the coordinator did about it.

A rebalance is a conversation between members and the coordinator, and when one goes wrong the question is always
"who was it waiting for, and why did that member not come back?". The timeline keeps, per group, every JoinGroup,
SyncGroup, Heartbeat and LeaveGroup (member id, client id, generation, the client's reason where JoinGroup v8+ and
LeaveGroup v5 carry one, the error answered, how long a JoinGroup or SyncGroup was parked, the principal and
listener it came from) together with the
coordinator's own events (members joining, leaving, expiring or being fenced, state changes, rebalances starting
and completing). A KIP-848 consumer group's ConsumerGroupHeartbeats are its heartbeats (each with the member's
epoch as its generation); its joins, leaves, epoch bumps and reconciliations are the coordinator's events. A view
adds what the group is doing now: which members the current rebalance still waits for and when each of their
session timers fires, and when the rebalance (or sync) timeout fires; for a consumer group, its epochs, each
member's epoch, state, current and target partitions, what it must still revoke and its revocation timer.

Feeding it stays off the coordinator's hands: requests arrive through the dispatcher's observer hook, and the
coordinator's events through `broker.events.EventTap`, which the broker wraps around the coordinator's event logger (the
coordinator still only calls a structlog-shaped logger; it knows nothing of timelines).

It is always on, so it is bounded and cheap: a heartbeat is one tuple appended to a deque; each group keeps at most
`timeline.events.per.group` events and as many heartbeats (heartbeats in their own deque, so a chatty group never
pushes its rebalance history out), and at most `timeline.max.groups` groups are kept, the one whose last
non-heartbeat event is oldest dropped first. Times are the broker clock's monotonic milliseconds (the clock session
deadlines are on, which tests can advance); views carry the offset to wall-clock time.

Rendered three ways from one JSON view, all served by the control API at `/groups/<id>/timeline`: `render_text`
(`?format=text`, what `group-broker groups timeline GROUP --control URL` prints), the JSON itself (`?format=json`)
and `render_html` (the default): one SVG swim lane per member, time on x, shaded rebalances, and a "waiting for"
panel.

This module is the model (the bounded per-group logs fed by requests and coordinator events); `live`
builds the live part of a view, `text` and `html` render views.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from broker.context import RequestContext
from protocol.errors import ErrorCode
from protocol.registry import ApiKey
from toolkit.timeline.bounded import BoundedLogs

if TYPE_CHECKING:
    from coordinator.coordinator import GroupCoordinator


_log = structlog.get_logger("toolkit.timeline")
JOIN_GROUP = int(ApiKey.JOIN_GROUP)
SYNC_GROUP = int(ApiKey.SYNC_GROUP)
HEARTBEAT = int(ApiKey.HEARTBEAT)
CONSUMER_GROUP_HEARTBEAT = int(ApiKey.CONSUMER_GROUP_HEARTBEAT)
LEAVE_GROUP = int(ApiKey.LEAVE_GROUP)
API_NAMES = {JOIN_GROUP: "JoinGroup", SYNC_GROUP: "SyncGroup", HEARTBEAT: "Heartbeat", LEAVE_GROUP: "LeaveGroup"}
PARKABLE = frozenset({JOIN_GROUP, SYNC_GROUP})
#: The requests whose end `request_finished` records (the dispatcher does not call it for others: `observes`).
_FINISHES = PARKABLE | {HEARTBEAT, CONSUMER_GROUP_HEARTBEAT, LEAVE_GROUP}
NO_RESPONSE = -1  # the handler raised or was cancelled: the client got no answer (its connection was closed)
SKIPPED_EVENTS = frozenset({"offsets.committed"})  # one per commit: counted by the metrics, not worth a mark


@dataclass(slots=True)
class TimelineEvent:
    at_ms: int
    kind: str  # an API name (a request, at the time it was answered) or a coordinator event name
    member: str | None = None
    client_id: str | None = None
    generation: int | None = None
    reason: str | None = None
    error: int | None = None  # the response's error code (requests only)
    started_ms: int | None = None  # when a JoinGroup/SyncGroup arrived (it may have been parked)
    detail: dict[str, Any] | None = None
    principal: str | None = None  # who sent it (requests only): `User:CN=...` on mutual TLS, User:ANONYMOUS ...
    listener: str | None = None  # ... and the listener it came in on
    node: int | None = None  # ... and the node that served it (a several-node cluster, `cluster.nodes`)


Heartbeat = tuple[int, str, str, str | None, int, int, str, str, int | None]
"""at_ms, API name, member, client id, generation, error, principal, listener, node (None on one node)."""


class GroupLog:
    __slots__ = ("dropped", "events", "heartbeats")

    def __init__(self, capacity: int) -> None:
        self.events: deque[TimelineEvent] = deque(maxlen=capacity)
        self.heartbeats: deque[Heartbeat] = deque(maxlen=capacity)
        self.dropped = 0


@dataclass(slots=True)
class _Pending:
    group_id: str
    api_key: int
    started_ms: int
    member: str
    client_id: str | None
    generation: int | None
    reason: str | None


def _error_of(response: Any) -> int:
    return NO_RESPONSE if response is None else int(getattr(response, "error_code", 0))


class Timeline:
    """The per-group event logs; a `RequestObserver` for the dispatcher and a sink for `EventTap`."""

    def __init__(self, now_ms: Callable[[], int], *, max_groups: int = 1000, events_per_group: int = 500) -> None:
        self.now_ms = now_ms  # the broker binds its clock's `monotonic_ms` here once it has one
        self._capacity = events_per_group
        self._groups: BoundedLogs[GroupLog] = BoundedLogs(max_groups, lambda: GroupLog(events_per_group))
        self._pending: dict[tuple[int, int], _Pending] = {}

    @property
    def dropped_groups(self) -> int:
        return self._groups.dropped_keys

    def _append(self, group_id: str, event: TimelineEvent) -> None:
        log = self._groups.touch(group_id)
        if len(log.events) == self._capacity:
            log.dropped += 1
        log.events.append(event)

    # -- the dispatcher's observer hook (every request: keep the non-group path to two comparisons) ------------

    def observes(self, api_key: int) -> tuple[bool, bool]:
        """The starts of JoinGroup and SyncGroup (a parked request's wait), the ends of the group requests recorded."""
        return api_key in PARKABLE, api_key in _FINISHES

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None:
        if api_key in PARKABLE:
            self._pending[(ctx.session.conn_id, ctx.correlation_id)] = _Pending(
                request.group_id,
                api_key,
                self.now_ms(),
                request.member_id,
                ctx.client_id,
                request.generation_id if api_key == SYNC_GROUP else None,
                getattr(request, "reason", None),
            )

    def request_finished(
        self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed_s: float
    ) -> None:
        if api_key == HEARTBEAT:  # the hot path: no LRU refresh, one tuple appended (built once, here)
            group_id = request.group_id
            log = self._groups.get(group_id) or self._groups.touch(group_id)
            beats = log.heartbeats
            if len(beats) == self._capacity:
                log.dropped += 1
            session = ctx.session
            beats.append(
                (
                    self.now_ms(),
                    "Heartbeat",
                    request.member_id,
                    ctx.client_id,
                    request.generation_id,
                    NO_RESPONSE if response is None else response.error_code,
                    session.principal,
                    session.listener,
                    session.node_id,
                )
            )
        elif api_key == CONSUMER_GROUP_HEARTBEAT:
            self._consumer_heartbeat(ctx, request, response)
        elif api_key in PARKABLE:
            self._finished_parkable(ctx, api_key, request, response)
        elif api_key == LEAVE_GROUP:
            self._finished_leave(ctx, request, response)

    def _heartbeat(self, group_id: str, beat: tuple[str, str, str | None, int, int, str, str, int | None]) -> None:
        log = self._groups.get(group_id) or self._groups.touch(group_id)
        beats = log.heartbeats
        if len(beats) == self._capacity:
            log.dropped += 1
        beats.append((self.now_ms(), *beat))

    def _consumer_heartbeat(self, ctx: RequestContext, request: Any, response: Any) -> None:
        """A ConsumerGroupHeartbeat: its generation is the member's epoch after the answer (the one it asked with
        when refused), its member the one the answer names when the request had none (v0's join)."""
        error = _error_of(response)
        epoch = response.member_epoch if error == ErrorCode.NONE else request.member_epoch
        member = request.member_id or (response.member_id if response is not None else None) or ""
        session = ctx.session
        self._heartbeat(
            request.group_id,
            (
                "ConsumerGroupHeartbeat",
                member,
                ctx.client_id,
                epoch,
                error,
                session.principal,
                session.listener,
                session.node_id,
            ),
        )

    def _finished_parkable(self, ctx: RequestContext, api_key: int, request: Any, response: Any) -> None:
        pending = self._pending.pop((ctx.session.conn_id, ctx.correlation_id), None)
        now = self.now_ms()
        error = _error_of(response)
        if api_key == JOIN_GROUP:
            member = (response.member_id if response is not None else "") or request.member_id
            generation = response.generation_id if response is not None else None
            detail: dict[str, Any] = {"protocol_type": request.protocol_type}
            if response is not None and response.leader:
                detail["leader"] = response.leader
                detail["protocol"] = response.protocol_name
            if response is not None and response.members:
                detail["members"] = [m.member_id for m in response.members]  # only the leader gets the list
            if request.group_instance_id is not None:
                detail["group_instance_id"] = request.group_instance_id
            event = TimelineEvent(
                now, "JoinGroup", member, ctx.client_id, generation, getattr(request, "reason", None), error
            )
        else:
            detail = {"leader_assignments": len(request.assignments)} if request.assignments else {}
            event = TimelineEvent(
                now, "SyncGroup", request.member_id, ctx.client_id, request.generation_id, None, error
            )
        event.started_ms = pending.started_ms if pending is not None else now
        event.detail = detail or None
        self._append(request.group_id, _sent_by(event, ctx))

    def _finished_leave(self, ctx: RequestContext, request: Any, response: Any) -> None:
        now = self.now_ms()
        top = _error_of(response)
        if request.members:  # v3+: a batch of members, each answered on its own
            answers = {m.member_id: m.error_code for m in response.members} if response is not None else {}
            for m in request.members:
                error = answers.get(m.member_id, top) if top == 0 else top
                detail = {"group_instance_id": m.group_instance_id} if m.group_instance_id else None
                event = TimelineEvent(
                    now, "LeaveGroup", m.member_id, ctx.client_id, None, m.reason, error, None, detail
                )
                self._append(request.group_id, _sent_by(event, ctx))
        else:
            event = TimelineEvent(now, "LeaveGroup", request.member_id, ctx.client_id, None, None, top)
            self._append(request.group_id, _sent_by(event, ctx))

    # -- the coordinator's events (via EventTap) -------------------------------------------------------------

    def on_event(self, event: str, fields: dict[str, Any]) -> None:
        group_id = fields.get("group")
        if group_id is None or event in SKIPPED_EVENTS:
            return
        member = fields.get("member", fields.get("new_member_id"))
        detail = {k: v for k, v in fields.items() if k not in ("group", "member", "generation", "reason", "client_id")}
        self._append(
            group_id,
            TimelineEvent(
                self.now_ms(),
                event,
                member,
                fields.get("client_id"),
                fields.get("generation"),
                fields.get("reason"),
                None,
                None,
                detail or None,
            ),
        )

    # -- reading ---------------------------------------------------------------------------------------------

    def group_ids(self) -> list[str]:
        return self._groups.keys()

    def events(self, group_id: str, *, heartbeats: bool = True) -> list[TimelineEvent]:
        """The group's events in time order (heartbeats merged in unless asked not to)."""
        log = self._groups.get(group_id)
        if log is None:
            return []
        if not heartbeats:
            return list(log.events)
        beats = (
            TimelineEvent(at, api, member, client, generation, None, error, None, None, principal, listener, node)
            for at, api, member, client, generation, error, principal, listener, node in log.heartbeats
        )
        return list(heapq.merge(log.events, beats, key=lambda e: e.at_ms))

    def view(
        self,
        group_id: str,
        coordinator: GroupCoordinator | None,
        now_ms: int,
        wall_offset_ms: int,
        *,
        heartbeats: bool = True,
    ) -> dict[str, Any] | None:
        """The JSON view every renderer works from; None when neither the timeline nor the coordinator knows
        the group."""
        from toolkit.timeline.live import lanes, live_state, rebalances  # a view is asked for, not needed to serve

        log = self._groups.get(group_id)
        live = live_state(coordinator, group_id, now_ms) if coordinator is not None else None
        if log is None and live is None:
            return None
        events = self.events(group_id, heartbeats=heartbeats)
        pending = [p for p in self._pending.values() if p.group_id == group_id]
        origin = min(
            [*(e.at_ms if e.started_ms is None else e.started_ms for e in events), *(p.started_ms for p in pending)],
            default=now_ms,
        )
        return {
            "group_id": group_id,
            "now_ms": now_ms,
            "origin_ms": origin,
            "wall_offset_ms": wall_offset_ms,
            "dropped_events": log.dropped if log is not None else 0,
            "live": live,
            "lanes": lanes(events, pending, live),
            "rebalances": rebalances(events, live, now_ms),
            "pending": [
                {
                    "api": API_NAMES[p.api_key],
                    "member": p.member or None,
                    "client_id": p.client_id,
                    "generation": p.generation,
                    "reason": p.reason,
                    "started_ms": p.started_ms,
                    "waiting_ms": now_ms - p.started_ms,
                }
                for p in pending
            ],
            "events": [_event_json(e, origin) for e in events],
        }


def _event_json(e: TimelineEvent, origin: int) -> dict[str, Any]:
    error = None
    if e.error is not None:
        error = "NO_RESPONSE" if e.error == NO_RESPONSE else _error_name(e.error)
    return {
        "at_ms": e.at_ms,
        "t_ms": e.at_ms - origin,
        "kind": e.kind,
        "member": e.member or None,
        "client_id": e.client_id,
        "generation": e.generation,
        "reason": e.reason,
        "error": error,
        "parked_ms": None if e.started_ms is None else e.at_ms - e.started_ms,
        "detail": e.detail,
        "principal": e.principal,
        "listener": e.listener,
        "node": e.node,
    }


def _sent_by(event: TimelineEvent, ctx: RequestContext) -> TimelineEvent:
    """`event` stamped with the principal and listener of the connection that sent the request, and its node."""
    session = ctx.session
    event.principal, event.listener, event.node = session.principal, session.listener, session.node_id
    return event


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)
