"""The HTML rendering of a timeline view: one SVG swim lane per member, shaded rebalances, a waiting panel."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from coordinator.consumer_group.views import show
from toolkit.timeline.labels import REBALANCING_STATES, client, describe, rel, secs, severity, wall
from toolkit.timeline.live import new_member_lane

if TYPE_CHECKING:
    pass


# Marks per event kind: (css class, shape, legend text)
_MARKS: dict[str, tuple[str, str, str]] = {
    "JoinGroup": ("join", "circle", "JoinGroup (bar: parked)"),
    "SyncGroup": ("sync", "square", "SyncGroup (bar: parked)"),
    "Heartbeat": ("heartbeat", "tick", "Heartbeat"),
    "ConsumerGroupHeartbeat": ("heartbeat", "tick", "ConsumerGroupHeartbeat"),
    "LeaveGroup": ("leave", "triangle", "LeaveGroup"),
    "member.joined": ("joined", "dot", "member added"),
    "member.left": ("left", "dot", "member removed"),
    "member.expired": ("expired", "cross", "session expired"),
    "member.fenced": ("fenced", "cross", "static member fenced"),
    "member.id_required": ("id-required", "dot", "member id handed out"),
    "member.reconciled": ("reconciled", "dot", "member reconciled (consumer group)"),
}
_STATE_COLORS = {
    "Empty": "#d0d7de",
    "PreparingRebalance": "#fb8c00",
    "CompletingRebalance": "#fdd835",
    "Assigning": "#fb8c00",
    "Reconciling": "#fdd835",
    "Stable": "#43a047",
    "Dead": "#424242",
}
LANE_H = 34
LABEL_W = 280
RIGHT_W = 200
WIDTH = 1160
AXIS_H = 28
MIN_SPAN_MS = 100

CSS = """
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
.mark.reconciled { fill: #2da44e; }
.mark.expired { stroke: #cf222e; stroke-width: 3; } .mark.fenced { stroke: #d97706; stroke-width: 3; }
.mark.error { stroke: #cf222e; stroke-width: 2.5; } .mark.signal { stroke: #d97706; stroke-width: 2.5; }
.state-label { fill: #111; } .deadline { stroke: #cf222e; stroke-dasharray: 2 2; stroke-width: 2; }
.deadline-label { fill: #cf222e; }
"""


def mark_shape(kind: str, cls: str, x: float, y: float) -> str:
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


def lane_backgrounds(count: int) -> list[str]:
    """The alternating backgrounds of `count` swim lanes below the axis."""
    return [
        f'<rect class="lane-bg{" odd" if i % 2 else ""}" x="0" y="{AXIS_H + LANE_H * i}" width="{WIDTH}" '
        f'height="{LANE_H}"/>'
        for i in range(count)
    ]


def axis(start: int, end: int, height: int, x: Callable[[int], float]) -> list[str]:
    """The time axis from `start` to `end` (broker-clock ms): a labelled tick every round step, +0 at `start`."""
    out = ['<g class="axis">']
    for tick in range(0, end - start + 1, _tick_step(end - start)):
        tx = x(start + tick)
        out.append(f'<line x1="{tx:.1f}" y1="{AXIS_H - 6}" x2="{tx:.1f}" y2="{height - 8}" opacity=".35"/>')
        out.append(f'<text x="{tx:.1f}" y="{AXIS_H - 10}" text-anchor="middle">+{tick / 1000:g}s</text>')
    out.append("</g>")
    return out


def now_line(now_x: float, height: int) -> str:
    return (
        f'<line class="now" x1="{now_x:.1f}" y1="{AXIS_H}" x2="{now_x:.1f}" y2="{height - 8}"><title>now</title></line>'
    )


@dataclass(frozen=True, slots=True)
class Plot:
    """What both timeline pages draw on: broker-clock time from `start` to `end` on x (after the lane labels),
    `lanes` swim lanes on y below the axis."""

    start: int
    end: int
    lanes: int

    @classmethod
    def of(cls, view: dict[str, Any], lanes: int) -> Plot:
        """From the view's origin to now or its last event, whichever is later (at least `MIN_SPAN_MS`)."""
        start: int = view["origin_ms"]
        end = max(view["now_ms"], *(ev["at_ms"] for ev in view["events"]), start + MIN_SPAN_MS)
        return cls(start, end, lanes)

    @property
    def height(self) -> int:
        return AXIS_H + LANE_H * self.lanes + 8

    def x(self, at_ms: int) -> float:
        plot_w = WIDTH - LABEL_W - RIGHT_W
        return LABEL_W + (min(max(at_ms, self.start), self.end) - self.start) * plot_w / (self.end - self.start)

    @staticmethod
    def y(index: int) -> int:
        return AXIS_H + LANE_H * index + LANE_H // 2

    def open(self, label: str) -> list[str]:
        """The `<svg>` element's start (`label` for screen readers) and the lanes' backgrounds."""
        height = self.height
        return [
            f'<svg xmlns="http://www.w3.org/2000/svg" id="swimlanes" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{html.escape(label)}">',
            *lane_backgrounds(self.lanes),
        ]

    def state_band(self, start_ms: int, end_ms: int, state: str, color: str, title: str) -> list[str]:
        """One state as a coloured band on lane 0, labelled where it is wide enough, `title` on hover."""
        e = html.escape
        x1, x2 = self.x(start_ms), self.x(end_ms)
        out = [
            f'<g class="state-band" data-state="{e(state)}"><rect x="{x1:.1f}" y="{self.y(0) - 9}" '
            f'width="{max(x2 - x1, 1.5):.1f}" height="18" fill="{color}" opacity=".75"/><title>{e(title)}</title>'
        ]
        if x2 - x1 > 7.5 * len(state) + 6:
            out.append(f'<text class="state-label" x="{x1 + 4:.1f}" y="{self.y(0) + 4}">{e(state)}</text>')
        out.append("</g>")
        return out


def _svg(view: dict[str, Any]) -> str:
    e = html.escape
    events = view["events"]
    live = view["live"]
    lanes = [lane["member"] for lane in view["lanes"]]
    clients = {lane["member"]: lane["client_id"] for lane in view["lanes"]}
    row = {member: i + 1 for i, member in enumerate(lanes)}  # row 0: the group itself
    plot = Plot.of(view, len(lanes) + 1)
    start, end, height, x, y = plot.start, plot.end, plot.height, plot.x, plot.y
    plot_w = WIDTH - LABEL_W - RIGHT_W
    out = plot.open(f"rebalance timeline of {view['group_id']}")
    # the group lane: one band per state, labelled where it is wide enough
    changes = [ev for ev in events if ev["kind"] == "group.state" and ev["detail"]]
    if changes or live is not None:
        bands: list[tuple[int, str]] = [(start, changes[0]["detail"].get("old_state", "?"))] if changes else []
        bands += [(ev["at_ms"], ev["detail"].get("new_state", "?")) for ev in changes]
        if not bands and live is not None:
            bands = [(start, live["state"])]
        for i, (band_start, state) in enumerate(bands):
            band_end = bands[i + 1][0] if i + 1 < len(bands) else view["now_ms"]
            title = f"{state} from {rel(view, band_start)} to {rel(view, band_end)}"
            out.extend(plot.state_band(band_start, band_end, state, _STATE_COLORS.get(state, "#999"), title))
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
    out.extend(axis(start, end, height, x))
    out.append(f'<text class="lane-label" x="8" y="{y(0) + 4}">group {e(_short(view["group_id"]))}</text>')
    out.extend(
        f'<g class="lane" data-member="{e(member)}"><text class="lane-label" x="8" y="{y(row[member]) - 2}">'
        f"{e(_short(member))}<title>{e(member)}</title></text>"
        f'<text x="8" y="{y(row[member]) + 12}" fill="#666">client {e(client(clients.get(member)))}</text></g>'
        for member in lanes
    )
    for ev in events:
        if ev["kind"] == "rebalance.completed":
            px = x(ev["at_ms"])
            title = f"{rel(view, ev['at_ms'])} rebalance completed: generation {ev['generation']}"
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
        title = e(f"{rel(view, ev['at_ms'])} {ev['kind']} {member} {describe(ev)}")
        if ev["parked_ms"]:
            out.append(
                f'<line class="bar {cls}" x1="{x(ev["at_ms"] - ev["parked_ms"]):.1f}" y1="{ly}" '
                f'x2="{x(ev["at_ms"]):.1f}" y2="{ly}"><title>{title}</title></line>'
            )
        level = severity(ev["error"])
        out.append(
            f'<g class="event" data-kind="{e(ev["kind"])}">'
            f"{mark_shape(shape, f'mark {cls} {level}'.rstrip(), x(ev['at_ms']), ly)}<title>{title}</title></g>"
        )
    for p in view["pending"]:
        lane = p["member"] or new_member_lane(p["client_id"])
        if lane not in row:
            continue
        ly = y(row[lane])
        title = e(f"{p['api']} parked since {rel(view, p['started_ms'])} ({secs(p['waiting_ms'])})")
        out.append(
            f'<line class="bar pending" x1="{x(p["started_ms"]):.1f}" y1="{ly}" x2="{x(view["now_ms"]):.1f}" '
            f'y2="{ly}"><title>{title}</title></line>'
        )
    for m in (live or {}).get("waiting_for", []):  # the timers a rebalance is waiting on
        timer = "revocation" if m.get("revocation_deadline_ms") is not None else "session"  # a consumer group's
        deadline = m[f"{timer}_deadline_ms"]
        if deadline is None or m["member_id"] not in row:
            continue
        ly = y(row[m["member_id"]])
        text = f"{timer} fires in {secs(m[f'{timer}_fires_in_ms'])}"
        if deadline <= end:
            out.append(
                f'<line class="deadline" x1="{x(deadline):.1f}" y1="{ly - 12}" x2="{x(deadline):.1f}" y2="{ly + 12}">'
                f"<title>{e(text)}</title></line>"
            )
        out.append(f'<text class="deadline-label" x="{LABEL_W + plot_w + 8}" y="{ly + 4}">{e(text)}</text>')
    out.append(now_line(x(view["now_ms"]), height))
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
    if live["group_type"] == "consumer":
        rows.extend(_reconciliation_rows(view, live))
    elif live["state"] not in REBALANCING_STATES:
        rows.append(f"<p>No rebalance in progress (state <b>{e(live['state'])}</b>).</p>")
    else:
        if live["rebalance_deadline_ms"] is not None:
            rows.append(
                f'<p class="group-timer">Rebalance timeout fires at {rel(view, live["rebalance_deadline_ms"])} '
                f"(in {secs(live['rebalance_fires_in_ms'])}).</p>"
            )
        if live["sync_deadline_ms"] is not None:
            rows.append(
                f'<p class="group-timer">Sync timeout fires at {rel(view, live["sync_deadline_ms"])} '
                f"(in {secs(live['sync_fires_in_ms'])}).</p>"
            )
        step = "JoinGroup" if live["state"] == "PreparingRebalance" else "SyncGroup"
        rows.append(f"<p>Waiting for {len(live['waiting_for'])} member(s) to send {step}:</p>")
        rows.append("<table><tr><th>member</th><th>client</th><th>session timer fires</th><th>in</th></tr>")
        rows.extend(
            f'<tr class="waiting-member" data-member="{e(m["member_id"])}"><td>{e(m["member_id"])}</td>'
            f"<td>{e(client(m['client_id']))}</td><td>{rel(view, m['session_deadline_ms'])}</td>"
            f"<td>{secs(m['session_fires_in_ms'])}</td></tr>"
            for m in live["waiting_for"]
        )
        rows.append("</table>")
    if view["pending"]:
        rows.append("<p>Parked requests:</p><ul>")
        rows.extend(
            f'<li class="pending">{e(p["api"])} from {e(p["member"] or "(new member)")} '
            f"(client {e(client(p['client_id']))}) for {secs(p['waiting_ms'])}</li>"
            for p in view["pending"]
        )
        rows.append("</ul>")
    return '<section id="waiting"><h2>Waiting for</h2>' + "".join(rows) + "</section>"


def _reconciliation_rows(view: dict[str, Any], live: dict[str, Any]) -> list[str]:
    """A consumer group's waiting panel: who waits for whom, then every member's epoch, state, partitions and
    timers (the group has no rebalance timeout: each member that owes a revocation has its own)."""
    e = html.escape
    if not live["reconciliation"]:
        rows = [f"<p>Nothing to reconcile (state <b>{e(live['state'])}</b>).</p>"]
    else:
        rows = ["<ul>", *(f'<li class="reconciliation">{e(s)}</li>' for s in live["reconciliation"]), "</ul>"]
    rows.append(
        "<table><tr><th>member</th><th>client</th><th>epoch</th><th>state</th><th>current</th><th>target</th>"
        "<th>revoking</th><th>revocation timeout fires</th><th>session timer fires</th></tr>"
    )
    for m in live["members"]:
        revocation = m["revocation_deadline_ms"]
        fires = "-" if revocation is None else f"{rel(view, revocation)} (in {secs(m['revocation_fires_in_ms'])})"
        waiting = ' class="waiting-member"' if m["waited_for"] else ""
        rows.append(
            f'<tr{waiting} data-member="{e(m["member_id"])}"><td>{e(m["member_id"])}</td>'
            f"<td>{e(client(m['client_id']))}</td><td>{m['member_epoch']}</td><td>{e(m['member_state'])}</td>"
            f"<td>{e(show(m['assigned']) or '-')}</td><td>{e(show(m['target']) or '-')}</td>"
            f"<td>{e(show(m['pending_revocation']) or '-')}</td><td>{fires}</td>"
            f"<td>{rel(view, m['session_deadline_ms'])} (in {secs(m['session_fires_in_ms'])})</td></tr>"
        )
    rows.append("</table>")
    return rows


def _summary(live: dict[str, Any] | None) -> str:
    e = html.escape
    if live is None:
        return "not known to the coordinator now"
    if live["group_type"] == "consumer":
        return (
            f"consumer group (KIP-848), state <b id='state'>{e(live['state'])}</b>, group epoch "
            f"<b>{live['group_epoch']}</b>, assignment epoch <b>{live['assignment_epoch']}</b>, "
            f"{len(live['members'])} member(s), assignor {e(str(live['protocol']))}"
        )
    return (
        f"state <b id='state'>{e(live['state'])}</b>, generation <b>{live['generation']}</b>, "
        f"{len(live['members'])} member(s), protocol {e(str(live['protocol_type']))}/{e(str(live['protocol']))}, "
        f"leader {e(str(live['leader']))}"
    )


def _transactions_panel(view: dict[str, Any]) -> str:
    """Links to the transaction timelines of the ids that sent the group's offsets (consume-transform-produce)."""
    e = html.escape
    ids = view.get("transactions") or []
    if not ids:
        return ""
    links = ", ".join(
        f"<a class='transaction' href='../../transactions/{quote(t, safe='')}/timeline'>{e(t)}</a>" for t in ids
    )
    return f"<section id='transactions'>Transactions that sent this group's offsets: {links}.</section>"


def render_html(view: dict[str, Any], refresh_s: int | None = None) -> str:
    e = html.escape
    summary = _summary(view["live"])
    legend = "".join(
        f'<span class="legend-item"><svg width="16" height="16">{mark_shape(shape, f"mark {cls}", 8, 8)}</svg>'
        f"{e(text)}</span>"
        for cls, shape, text in _MARKS.values()
    )
    legend += "".join(
        f'<span class="legend-item"><svg width="16" height="12"><rect width="16" height="12" fill="{color}"/></svg>'
        f"{state}</span>"
        for state, color in _STATE_COLORS.items()
    )
    event_rows = "".join(
        f'<tr class="{severity(ev["error"])}" data-kind="{e(ev["kind"])}">'
        f"<td>{rel(view, ev['at_ms'])}</td><td>{e(ev['kind'])}</td><td>{e(ev['member'] or '')}</td>"
        f"<td>{e(describe(ev))}</td></tr>"
        for ev in view["events"]
    )
    refresh = f'<meta http-equiv="refresh" content="{refresh_s}">' if refresh_s else ""
    dropped = f" ({view['dropped_events']} older events dropped)" if view["dropped_events"] else ""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{refresh}'
        f"<title>Timeline: group {e(view['group_id'])}</title><style>{CSS}</style></head><body>"
        f"<h1>Rebalance timeline: group <span id='group-id'>{e(view['group_id'])}</span></h1>"
        f"<div class='sub'>{summary}. Time +0 = {wall(view, view['origin_ms'])}, now = "
        f"{rel(view, view['now_ms'])}{dropped}. Also as <a href='?format=json'>JSON</a> and "
        f"<a href='?format=text'>text</a>.</div>"
        f"{_transactions_panel(view)}{_waiting_panel(view)}<section id='lanes'>{_svg(view)}<div class='legend'>{legend}"
        f"<span class='legend-item'>shaded: rebalance in progress</span></div></section>"
        f"<section><h2>Events</h2><table id='events'><tr><th>time</th><th>event</th><th>member</th>"
        f"<th>details</th></tr>{event_rows}</table></section></body></html>"
    )
