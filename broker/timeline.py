"""The rebalance timeline of each group: who sent which group request when, and what the coordinator did about it.

A rebalance is a conversation between members and the coordinator, and when one goes wrong the question is always
"who was it waiting for, and why did that member not come back?". The timeline keeps, per group, every JoinGroup,
SyncGroup, Heartbeat and LeaveGroup (member id, client id, generation, the client's reason where JoinGroup v8+ and
LeaveGroup v5 carry one, the error answered, how long a JoinGroup or SyncGroup was parked) together with the
coordinator's own events (members joining, leaving, expiring or being fenced, state changes, rebalances starting
and completing). A view adds what the group is doing now: which members the current rebalance still waits for and
when each of their session timers fires, and when the rebalance (or sync) timeout fires.

Feeding it stays off the coordinator's hands: requests arrive through the dispatcher's observer hook, and the
coordinator's events through `EventTap`, which the broker wraps around the coordinator's event logger (the
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
"""

from __future__ import annotations

import heapq
import html
import json
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import structlog

from broker.context import RequestContext
from coordinator.core import join_key, sync_key
from coordinator.events import EventLogger
from protocol.errors import ErrorCode
from protocol.registry import ApiKey

if TYPE_CHECKING:
    from coordinator.coordinator import GroupCoordinator

_log = structlog.get_logger("broker.timeline")
JOIN_GROUP = int(ApiKey.JOIN_GROUP)
SYNC_GROUP = int(ApiKey.SYNC_GROUP)
HEARTBEAT = int(ApiKey.HEARTBEAT)
LEAVE_GROUP = int(ApiKey.LEAVE_GROUP)
API_NAMES = {JOIN_GROUP: "JoinGroup", SYNC_GROUP: "SyncGroup", HEARTBEAT: "Heartbeat", LEAVE_GROUP: "LeaveGroup"}
PARKABLE = frozenset({JOIN_GROUP, SYNC_GROUP})
NO_RESPONSE = -1  # the handler raised or was cancelled: the client got no answer (its connection was closed)
SKIPPED_EVENTS = frozenset({"offsets.committed"})  # one per commit: counted by the metrics, not worth a mark
REBALANCING = ("PreparingRebalance", "CompletingRebalance")


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


Heartbeat = tuple[int, str, str | None, int, int]  # at_ms, member, client id, generation, error code


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
        self._max_groups = max_groups
        self._capacity = events_per_group
        self._groups: OrderedDict[str, GroupLog] = OrderedDict()
        self._pending: dict[tuple[int, int], _Pending] = {}
        self.dropped_groups = 0

    def _log(self, group_id: str) -> GroupLog:
        groups = self._groups
        log = groups.get(group_id)
        if log is None:
            if len(groups) >= self._max_groups:
                groups.popitem(last=False)
                self.dropped_groups += 1
            log = groups[group_id] = GroupLog(self._capacity)
        else:
            groups.move_to_end(group_id)
        return log

    def _append(self, group_id: str, event: TimelineEvent) -> None:
        log = self._log(group_id)
        if len(log.events) == self._capacity:
            log.dropped += 1
        log.events.append(event)

    # -- the dispatcher's observer hook (every request: keep the non-group path to two comparisons) ------------

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
        if api_key == HEARTBEAT:  # the hot path: no LRU refresh, one tuple appended
            log = self._groups.get(request.group_id) or self._log(request.group_id)
            beats = log.heartbeats
            if len(beats) == self._capacity:
                log.dropped += 1
            beats.append(
                (
                    self.now_ms(),
                    request.member_id,
                    ctx.client_id,
                    request.generation_id,
                    NO_RESPONSE if response is None else response.error_code,
                )
            )
        elif api_key in PARKABLE:
            self._finished_parkable(ctx, api_key, request, response)
        elif api_key == LEAVE_GROUP:
            self._finished_leave(ctx, request, response)

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
        self._append(request.group_id, event)

    def _finished_leave(self, ctx: RequestContext, request: Any, response: Any) -> None:
        now = self.now_ms()
        top = _error_of(response)
        if request.members:  # v3+: a batch of members, each answered on its own
            answers = {m.member_id: m.error_code for m in response.members} if response is not None else {}
            for m in request.members:
                error = answers.get(m.member_id, top) if top == 0 else top
                detail = {"group_instance_id": m.group_instance_id} if m.group_instance_id else None
                self._append(
                    request.group_id,
                    TimelineEvent(now, "LeaveGroup", m.member_id, ctx.client_id, None, m.reason, error, None, detail),
                )
        else:
            self._append(
                request.group_id, TimelineEvent(now, "LeaveGroup", request.member_id, ctx.client_id, None, None, top)
            )

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
        return list(self._groups)

    def events(self, group_id: str, *, heartbeats: bool = True) -> list[TimelineEvent]:
        """The group's events in time order (heartbeats merged in unless asked not to)."""
        log = self._groups.get(group_id)
        if log is None:
            return []
        if not heartbeats:
            return list(log.events)
        beats = (
            TimelineEvent(at, "Heartbeat", member, client, generation, None, error)
            for at, member, client, generation, error in log.heartbeats
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
            "lanes": _lanes(events, pending, live),
            "rebalances": _rebalances(events, live, now_ms),
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
    }


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def live_state(coordinator: GroupCoordinator, group_id: str, now_ms: int) -> dict[str, Any] | None:
    """What the group is doing now: members, who the rebalance waits for and when every relevant timer fires."""
    group = coordinator.group(group_id)
    if group is None:
        return None
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


def _lanes(events: list[TimelineEvent], pending: list[_Pending], live: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One lane per member, in order of first appearance; current members that left no event still get one."""
    lanes: dict[str, str | None] = {}
    for e in events:
        if e.member and (e.member not in lanes or (lanes[e.member] is None and e.client_id)):
            lanes[e.member] = e.client_id
    for p in pending:
        lanes.setdefault(p.member or _new_member_lane(p.client_id), p.client_id)
    for m in (live or {}).get("members", []):
        lanes.setdefault(m["member_id"], m["client_id"])
    return [{"member": member, "client_id": client} for member, client in lanes.items()]


def _new_member_lane(client_id: str | None) -> str:
    return f"(new member of {client_id})"


def _rebalances(events: list[TimelineEvent], live: dict[str, Any] | None, now_ms: int) -> list[dict[str, Any]]:
    """Rebalance periods: from `rebalance.started` (or a move to PreparingRebalance) until the group is Stable
    (outcome "completed") or Empty/Dead again; one still open has `end_ms` None."""
    periods: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for e in events:
        new_state = e.detail.get("new_state") if e.kind == "group.state" and e.detail else None
        if e.kind == "rebalance.started" or new_state == "PreparingRebalance":
            if current is None:
                current = {"start_ms": e.at_ms, "end_ms": None, "reasons": [], "generation": None, "outcome": None}
                periods.append(current)
            if e.kind == "rebalance.started" and e.reason:
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
    if current is None and live is not None and live["state"] in REBALANCING:
        # the start was pushed out of the bounded log: the rebalance is still on, from before the first event
        start = events[0].at_ms if events else now_ms
        periods.append({"start_ms": start, "end_ms": None, "reasons": [], "generation": None, "outcome": None})
    return periods


class EventTap:
    """An `EventLogger` that forwards every coordinator event to the real logger and to sinks (the timeline and
    the metrics). The coordinator is handed `Events(EventTap(...))` and stays sans-IO: it still only logs."""

    __slots__ = ("_inner", "_sinks")

    def __init__(self, inner: EventLogger, sinks: Iterable[Callable[[str, dict[str, Any]], None]]) -> None:
        self._inner = inner
        self._sinks = tuple(sinks)

    def _tap(self, event: str, kw: dict[str, Any]) -> None:
        for sink in self._sinks:
            try:
                sink(event, kw)
            except Exception:  # an observability bug must never break the coordinator mid-transition
                _log.exception("event_tap.sink_failed", event_name=event)

    def info(self, event: str, **kw: Any) -> Any:
        self._tap(event, kw)
        return self._inner.info(event, **kw)

    def warning(self, event: str, **kw: Any) -> Any:
        self._tap(event, kw)
        return self._inner.warning(event, **kw)

    def debug(self, event: str, **kw: Any) -> Any:
        self._tap(event, kw)
        return self._inner.debug(event, **kw)


# -- rendering ---------------------------------------------------------------------------------------------------

QUIET_ERRORS = frozenset({None, "NONE", "MEMBER_ID_REQUIRED"})  # MEMBER_ID_REQUIRED is step one of every join
SIGNAL_ERRORS = frozenset({"REBALANCE_IN_PROGRESS"})  # how members learn of a rebalance: worth a mark, not an alarm


def _severity(error: str | None) -> str:
    return "" if error in QUIET_ERRORS else "signal" if error in SIGNAL_ERRORS else "error"


def _secs(ms: int | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.3f}s"


def _rel(view: dict[str, Any], at_ms: int | None) -> str:
    return "-" if at_ms is None else f"+{(at_ms - view['origin_ms']) / 1000:.3f}s"


def _wall(view: dict[str, Any], at_ms: int) -> str:
    stamp = datetime.fromtimestamp((at_ms + view["wall_offset_ms"]) / 1000, tz=UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _describe(e: dict[str, Any]) -> str:
    parts = []
    if e["client_id"] is not None:
        parts.append(f"client={e['client_id']}")
    if e["generation"] is not None:
        parts.append(f"gen={e['generation']}")
    if e["error"] is not None:
        parts.append(f"-> {e['error']}")
    if e["parked_ms"]:
        parts.append(f"(after {_secs(e['parked_ms'])})")
    if e["reason"]:
        parts.append(f"reason={json.dumps(e['reason'])}")
    parts.extend(f"{key}={value}" for key, value in (e["detail"] or {}).items() if value is not None)
    return " ".join(parts)


def render_text(view: dict[str, Any]) -> str:
    lines = [f"group {view['group_id']}"]
    live = view["live"]
    if live is None:
        lines.append("  (not known to the coordinator now: deleted, unloaded or never created)")
    else:
        lines.append(
            f"  state={live['state']} generation={live['generation']} protocol={live['protocol_type']}/"
            f"{live['protocol']} leader={live['leader']} members={len(live['members'])}"
        )
        if live["state"] in REBALANCING:
            timer = (
                f"rebalance timeout fires in {_secs(live['rebalance_fires_in_ms'])}"
                if live["rebalance_deadline_ms"] is not None
                else f"sync timeout fires in {_secs(live['sync_fires_in_ms'])}"
                if live["sync_deadline_ms"] is not None
                else "no group timer armed"
            )
            lines.append(f"  waiting for {len(live['waiting_for'])} member(s); {timer}")
            lines.extend(
                f"    {m['member_id']} client={m['client_id']} session timer fires at "
                f"{_rel(view, m['session_deadline_ms'])} (in {_secs(m['session_fires_in_ms'])})"
                for m in live["waiting_for"]
            )
    for p in view["pending"]:
        who = p["member"] or "(new member)"
        lines.append(f"  pending {p['api']} from {who} client={p['client_id']} for {_secs(p['waiting_ms'])}")
    if view["dropped_events"]:
        lines.append(f"  ({view['dropped_events']} older events dropped)")
    lines.append(f"  events (+0 = {_wall(view, view['origin_ms'])}):")
    lines.extend(
        f"  {_rel(view, e['at_ms']):>11}  {e['kind']:<24} {e['member'] or '-':<40} {_describe(e)}".rstrip()
        for e in view["events"]
    )
    return "\n".join(lines) + "\n"


# Marks per event kind: (css class, shape, legend text)
_MARKS: dict[str, tuple[str, str, str]] = {
    "JoinGroup": ("join", "circle", "JoinGroup (bar: parked)"),
    "SyncGroup": ("sync", "square", "SyncGroup (bar: parked)"),
    "Heartbeat": ("heartbeat", "tick", "Heartbeat"),
    "LeaveGroup": ("leave", "triangle", "LeaveGroup"),
    "member.joined": ("joined", "dot", "member added"),
    "member.left": ("left", "dot", "member removed"),
    "member.expired": ("expired", "cross", "session expired"),
    "member.fenced": ("fenced", "cross", "static member fenced"),
    "member.id_required": ("id-required", "dot", "member id handed out"),
}
_STATE_COLORS = {
    "Empty": "#d0d7de",
    "PreparingRebalance": "#fb8c00",
    "CompletingRebalance": "#fdd835",
    "Stable": "#43a047",
    "Dead": "#424242",
}
LANE_H = 34
LABEL_W = 280
RIGHT_W = 200
WIDTH = 1160
AXIS_H = 28
MIN_SPAN_MS = 100

_CSS = """
body { font: 14px system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 0 0 6px; }
.sub { color: #555; margin-bottom: 12px; } section { margin: 12px 0; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; }
#waiting { border: 1px solid #e0a040; background: #fff8ec; padding: 8px 12px; border-radius: 6px; }
#waiting p { margin: 4px 0; }
#swimlanes { width: 100%; height: auto; max-width: 1160px; display: block; }
#events td { font-family: ui-monospace, monospace; font-size: 12px; border-top: 1px solid #eee; }
tr.error td { color: #b00020; } tr.signal td { color: #a15c00; }
.legend { font-size: 13px; } .legend-item { margin-right: 14px; white-space: nowrap; }
.legend svg { vertical-align: middle; margin-right: 3px; }
svg text { font: 12px ui-monospace, monospace; }
.lane-bg { fill: #fafafa; } .lane-bg.odd { fill: #f2f2f2; }
.rebalance { fill: #ffb347; opacity: .25; } .rebalance.open { fill: #ff7f50; opacity: .3; }
.axis line { stroke: #bbb; } .now { stroke: #333; stroke-dasharray: 4 3; }
.bar { stroke-width: 6; stroke-linecap: round; opacity: .45; } .bar.join { stroke: #1f6feb; }
.bar.sync { stroke: #2da44e; } .bar.pending { stroke: #d97706; stroke-dasharray: 6 3; opacity: .8; }
.mark.join { fill: #1f6feb; } .mark.sync { fill: #2da44e; } .mark.heartbeat { stroke: #777; stroke-width: 1.5; }
.mark.leave { fill: #8250df; } .mark.joined, .mark.left, .mark.id-required { fill: #999; }
.mark.expired { stroke: #cf222e; stroke-width: 3; } .mark.fenced { stroke: #d97706; stroke-width: 3; }
.mark.error { stroke: #cf222e; stroke-width: 2.5; } .mark.signal { stroke: #d97706; stroke-width: 2.5; }
.state-label { fill: #111; } .deadline { stroke: #cf222e; stroke-dasharray: 2 2; stroke-width: 2; }
.deadline-label { fill: #cf222e; }
"""


def _shape(kind: str, cls: str, x: float, y: float) -> str:
    if kind == "circle":
        return f'<circle class="{cls}" cx="{x:.1f}" cy="{y}" r="6"/>'
    if kind == "square":
        return f'<rect class="{cls}" x="{x - 5:.1f}" y="{y - 5}" width="10" height="10"/>'
    if kind == "triangle":
        return f'<path class="{cls}" d="M{x - 6:.1f},{y + 6} L{x + 6:.1f},{y + 6} L{x:.1f},{y - 7} Z"/>'
    if kind == "cross":
        d = f"M{x - 6:.1f},{y - 6} L{x + 6:.1f},{y + 6} M{x - 6:.1f},{y + 6} L{x + 6:.1f},{y - 6}"
        return f'<path class="{cls}" d="{d}"/>'
    if kind == "tick":
        return f'<line class="{cls}" x1="{x:.1f}" y1="{y - 8}" x2="{x:.1f}" y2="{y + 8}"/>'
    return f'<circle class="{cls}" cx="{x:.1f}" cy="{y}" r="3"/>'


def _tick_step(span_ms: int) -> int:
    for step in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000):
        if span_ms / step <= 10:
            return step
    return 600_000 * (1 + span_ms // 6_000_000)


def _short(member: str, limit: int = 34) -> str:
    """Member ids are `<client id>-<uuid>`: keep both ends, where they differ."""
    return member if len(member) <= limit else member[: limit - 13] + "…" + member[-12:]


def _svg(view: dict[str, Any]) -> str:
    e = html.escape
    events = view["events"]
    live = view["live"]
    start: int = view["origin_ms"]
    end: int = max([view["now_ms"], *(ev["at_ms"] for ev in events)])
    end = max(end, start + MIN_SPAN_MS)
    plot_w = WIDTH - LABEL_W - RIGHT_W

    def x(at_ms: int) -> float:
        return LABEL_W + (min(max(at_ms, start), end) - start) * plot_w / (end - start)

    lanes = [lane["member"] for lane in view["lanes"]]
    clients = {lane["member"]: lane["client_id"] for lane in view["lanes"]}
    row = {member: i + 1 for i, member in enumerate(lanes)}  # row 0: the group itself
    height = AXIS_H + LANE_H * (len(lanes) + 1) + 8

    def y(index: int) -> int:
        return AXIS_H + LANE_H * index + LANE_H // 2

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="swimlanes" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="rebalance timeline of {e(view["group_id"])}">'
    ]
    for i in range(len(lanes) + 1):
        odd = " odd" if i % 2 else ""
        out.append(f'<rect class="lane-bg{odd}" x="0" y="{AXIS_H + LANE_H * i}" width="{WIDTH}" height="{LANE_H}"/>')
    # the group lane: one band per state, labelled where it is wide enough
    changes = [ev for ev in events if ev["kind"] == "group.state" and ev["detail"]]
    if changes or live is not None:
        bands: list[tuple[int, str]] = [(start, changes[0]["detail"].get("old_state", "?"))] if changes else []
        bands += [(ev["at_ms"], ev["detail"].get("new_state", "?")) for ev in changes]
        if not bands and live is not None:
            bands = [(start, live["state"])]
        for i, (band_start, state) in enumerate(bands):
            band_end = bands[i + 1][0] if i + 1 < len(bands) else view["now_ms"]
            x1, x2 = x(band_start), x(band_end)
            title = f"{state} from {_rel(view, band_start)} to {_rel(view, band_end)}"
            out.append(
                f'<g class="state-band" data-state="{e(state)}"><rect x="{x1:.1f}" y="{y(0) - 9}" '
                f'width="{max(x2 - x1, 1.5):.1f}" height="18" fill="{_STATE_COLORS.get(state, "#999")}" opacity=".75"/>'
                f"<title>{e(title)}</title>"
            )
            if x2 - x1 > 7.5 * len(state) + 6:
                out.append(f'<text class="state-label" x="{x1 + 4:.1f}" y="{y(0) + 4}">{e(state)}</text>')
            out.append("</g>")
    for r in view["rebalances"]:
        x1, x2 = x(r["start_ms"]), x(r["end_ms"] if r["end_ms"] is not None else view["now_ms"])
        state = "open" if r["end_ms"] is None else "closed"
        title = "rebalance " + (
            "in progress" if r["end_ms"] is None else f"{r['outcome']}, generation {r['generation']}"
        )
        if r["reasons"]:
            title += ": " + "; ".join(r["reasons"])
        out.append(
            f'<rect class="rebalance {state}" x="{x1:.1f}" y="{AXIS_H + LANE_H}" width="{max(x2 - x1, 2):.1f}" '
            f'height="{LANE_H * len(lanes)}"><title>{e(title)}</title></rect>'
        )
    step = _tick_step(end - start)
    out.append('<g class="axis">')
    for tick in range(0, end - start + 1, step):
        tx = x(start + tick)
        out.append(f'<line x1="{tx:.1f}" y1="{AXIS_H - 6}" x2="{tx:.1f}" y2="{height - 8}" opacity=".35"/>')
        out.append(f'<text x="{tx:.1f}" y="{AXIS_H - 10}" text-anchor="middle">+{tick / 1000:g}s</text>')
    out.append("</g>")
    out.append(f'<text class="lane-label" x="8" y="{y(0) + 4}">group {e(_short(view["group_id"]))}</text>')
    out.extend(
        f'<g class="lane" data-member="{e(member)}"><text class="lane-label" x="8" y="{y(row[member]) - 2}">'
        f"{e(_short(member))}<title>{e(member)}</title></text>"
        f'<text x="8" y="{y(row[member]) + 12}" fill="#666">client {e(str(clients.get(member)))}</text></g>'
        for member in lanes
    )
    for ev in events:
        if ev["kind"] == "rebalance.completed":
            px = x(ev["at_ms"])
            title = f"{_rel(view, ev['at_ms'])} rebalance completed: generation {ev['generation']}"
            out.append(
                f'<path class="mark rebalance-completed" d="M{px:.1f},{y(0) - 8} L{px + 7:.1f},{y(0)} '
                f'L{px:.1f},{y(0) + 8} L{px - 7:.1f},{y(0)} Z" fill="#1b5e20" stroke="#fff">'
                f"<title>{e(title)}</title></path>"
            )
    for ev in events:
        member = ev["member"]
        mark = _MARKS.get(ev["kind"])
        if mark is None or member not in row:
            continue
        cls, shape, _ = mark
        ly = y(row[member])
        title = e(f"{_rel(view, ev['at_ms'])} {ev['kind']} {member} {_describe(ev)}")
        if ev["parked_ms"]:
            out.append(
                f'<line class="bar {cls}" x1="{x(ev["at_ms"] - ev["parked_ms"]):.1f}" y1="{ly}" '
                f'x2="{x(ev["at_ms"]):.1f}" y2="{ly}"><title>{title}</title></line>'
            )
        severity = _severity(ev["error"])
        out.append(
            f'<g class="event" data-kind="{e(ev["kind"])}">'
            f"{_shape(shape, f'mark {cls} {severity}'.rstrip(), x(ev['at_ms']), ly)}<title>{title}</title></g>"
        )
    for p in view["pending"]:
        lane = p["member"] or _new_member_lane(p["client_id"])
        if lane not in row:
            continue
        ly = y(row[lane])
        title = e(f"{p['api']} parked since {_rel(view, p['started_ms'])} ({_secs(p['waiting_ms'])})")
        out.append(
            f'<line class="bar pending" x1="{x(p["started_ms"]):.1f}" y1="{ly}" x2="{x(view["now_ms"]):.1f}" '
            f'y2="{ly}"><title>{title}</title></line>'
        )
    for m in (live or {}).get("waiting_for", []):  # the session timers a rebalance is waiting on
        deadline = m["session_deadline_ms"]
        if deadline is None or m["member_id"] not in row:
            continue
        ly = y(row[m["member_id"]])
        text = f"session fires in {_secs(m['session_fires_in_ms'])}"
        if deadline <= end:
            out.append(
                f'<line class="deadline" x1="{x(deadline):.1f}" y1="{ly - 12}" x2="{x(deadline):.1f}" y2="{ly + 12}">'
                f"<title>{e(text)}</title></line>"
            )
        out.append(f'<text class="deadline-label" x="{LABEL_W + plot_w + 8}" y="{ly + 4}">{e(text)}</text>')
    now_x = x(view["now_ms"])
    out.append(
        f'<line class="now" x1="{now_x:.1f}" y1="{AXIS_H}" x2="{now_x:.1f}" y2="{height - 8}"><title>now</title></line>'
    )
    out.append("</svg>")
    return "\n".join(out)


def _waiting_panel(view: dict[str, Any]) -> str:
    e = html.escape
    live = view["live"]
    if live is None:
        return (
            '<section id="waiting"><b>Not known to the coordinator now</b> (deleted, unloaded or never created).'
            "</section>"
        )
    rows = []
    if live["state"] not in REBALANCING:
        rows.append(f"<p>No rebalance in progress (state <b>{e(live['state'])}</b>).</p>")
    else:
        if live["rebalance_deadline_ms"] is not None:
            rows.append(
                f'<p class="group-timer">Rebalance timeout fires at {_rel(view, live["rebalance_deadline_ms"])} '
                f"(in {_secs(live['rebalance_fires_in_ms'])}).</p>"
            )
        if live["sync_deadline_ms"] is not None:
            rows.append(
                f'<p class="group-timer">Sync timeout fires at {_rel(view, live["sync_deadline_ms"])} '
                f"(in {_secs(live['sync_fires_in_ms'])}).</p>"
            )
        step = "JoinGroup" if live["state"] == "PreparingRebalance" else "SyncGroup"
        rows.append(f"<p>Waiting for {len(live['waiting_for'])} member(s) to send {step}:</p>")
        rows.append("<table><tr><th>member</th><th>client</th><th>session timer fires</th><th>in</th></tr>")
        rows.extend(
            f'<tr class="waiting-member" data-member="{e(m["member_id"])}"><td>{e(m["member_id"])}</td>'
            f"<td>{e(str(m['client_id']))}</td><td>{_rel(view, m['session_deadline_ms'])}</td>"
            f"<td>{_secs(m['session_fires_in_ms'])}</td></tr>"
            for m in live["waiting_for"]
        )
        rows.append("</table>")
    if view["pending"]:
        rows.append("<p>Parked requests:</p><ul>")
        rows.extend(
            f'<li class="pending">{e(p["api"])} from {e(p["member"] or "(new member)")} '
            f"(client {e(str(p['client_id']))}) for {_secs(p['waiting_ms'])}</li>"
            for p in view["pending"]
        )
        rows.append("</ul>")
    return '<section id="waiting"><h2>Waiting for</h2>' + "".join(rows) + "</section>"


def render_html(view: dict[str, Any], refresh_s: int | None = None) -> str:
    e = html.escape
    live = view["live"]
    summary = (
        f"state <b id='state'>{e(live['state'])}</b>, generation <b>{live['generation']}</b>, "
        f"{len(live['members'])} member(s), protocol {e(str(live['protocol_type']))}/{e(str(live['protocol']))}, "
        f"leader {e(str(live['leader']))}"
        if live is not None
        else "not known to the coordinator now"
    )
    legend = "".join(
        f'<span class="legend-item"><svg width="16" height="16">{_shape(shape, f"mark {cls}", 8, 8)}</svg>'
        f"{e(text)}</span>"
        for cls, shape, text in _MARKS.values()
    )
    legend += "".join(
        f'<span class="legend-item"><svg width="16" height="12"><rect width="16" height="12" fill="{color}"/></svg>'
        f"{state}</span>"
        for state, color in _STATE_COLORS.items()
    )
    event_rows = "".join(
        f'<tr class="{_severity(ev["error"])}" data-kind="{e(ev["kind"])}">'
        f"<td>{_rel(view, ev['at_ms'])}</td><td>{e(ev['kind'])}</td><td>{e(ev['member'] or '')}</td>"
        f"<td>{e(_describe(ev))}</td></tr>"
        for ev in view["events"]
    )
    refresh = f'<meta http-equiv="refresh" content="{refresh_s}">' if refresh_s else ""
    dropped = f" ({view['dropped_events']} older events dropped)" if view["dropped_events"] else ""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{refresh}'
        f"<title>Timeline: group {e(view['group_id'])}</title><style>{_CSS}</style></head><body>"
        f"<h1>Rebalance timeline: group <span id='group-id'>{e(view['group_id'])}</span></h1>"
        f"<div class='sub'>{summary}. Time +0 = {_wall(view, view['origin_ms'])}, now = "
        f"{_rel(view, view['now_ms'])}{dropped}. Also as <a href='?format=json'>JSON</a> and "
        f"<a href='?format=text'>text</a>.</div>"
        f"{_waiting_panel(view)}<section id='lanes'>{_svg(view)}<div class='legend'>{legend}"
        f"<span class='legend-item'>shaded: rebalance in progress</span></div></section>"
        f"<section><h2>Events</h2><table id='events'><tr><th>time</th><th>event</th><th>member</th>"
        f"<th>details</th></tr>{event_rows}</table></section></body></html>"
    )
