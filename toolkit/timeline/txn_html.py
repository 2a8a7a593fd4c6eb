"""The HTML rendering of a transaction timeline view: the id's states as a band, the producer's requests on one
lane, one lane per partition with its markers, a "waiting for" panel and the event table.

It is the group page's sibling (`html.py`): the same axis, lanes, marks and style, so a consume-transform-produce
pipeline's group and its transactional id read alike side by side.
"""

from __future__ import annotations

import html
from typing import Any

from toolkit.timeline.html import CSS, Plot, axis, mark_shape, now_line
from toolkit.timeline.labels import (
    describe_transaction_event,
    rel,
    severity,
    transaction_summary,
    transaction_waits,
    wall,
)

# Marks per event kind on the producer lane (row 1) and the partition lanes: (css class, shape, legend text)
_PRODUCER_MARKS: dict[str, tuple[str, str, str]] = {
    "InitProducerId": ("init", "circle", "InitProducerId"),
    "AddPartitionsToTxn": ("add", "square", "AddPartitionsToTxn / AddOffsetsToTxn"),
    "AddOffsetsToTxn": ("add", "square", ""),
    "TxnOffsetCommit": ("offsets", "tick", "TxnOffsetCommit"),
    "EndTxn": ("end", "triangle", "EndTxn"),
    "txn.timed_out": ("expired", "cross", "timed out"),
    "txn.fenced": ("fenced", "cross", "fenced (epoch bumped)"),
}
_PARTITION_MARKS: dict[str, tuple[str, str, str]] = {
    "txn.markers_sent": ("sent", "tick", "markers handed out"),
    "markers.written": ("written", "circle", "marker written (green COMMIT, red ABORT)"),
    "txn.markers_failed": ("failed", "cross", "marker write failed (retried)"),
    "fault.markers_failed": ("failed", "cross", ""),
    "fault.markers_held": ("held", "square", "markers held back by a fault"),
}
_STATE_COLORS = {
    "Empty": "#d0d7de",
    "Ongoing": "#1f6feb",
    "PrepareCommit": "#fdd835",
    "PrepareAbort": "#fb8c00",
    "CompleteCommit": "#43a047",
    "CompleteAbort": "#cf222e",
    "PrepareEpochFence": "#8250df",
    "Dead": "#424242",
}
_TXN_CSS = """
.mark.init { fill: #1f6feb; } .mark.add { fill: #2da44e; } .mark.offsets { stroke: #777; stroke-width: 1.5; }
.mark.end { fill: #8250df; } .mark.sent { stroke: #777; stroke-width: 1.5; } .mark.written { fill: #2da44e; }
.mark.written.abort { fill: #cf222e; } .mark.failed { stroke: #cf222e; stroke-width: 3; }
.mark.held { fill: #d97706; } .mark.added { fill: #999; }
.bar.held { stroke: #d97706; stroke-dasharray: 6 3; opacity: .8; }
"""


def _svg(view: dict[str, Any]) -> str:
    e = html.escape
    events = view["events"]
    partitions: list[str] = view["partitions"]
    row = {p: i + 2 for i, p in enumerate(partitions)}  # row 0: the states, row 1: the producer
    plot = Plot.of(view, len(partitions) + 2)
    x, y = plot.x, plot.y
    out = plot.open(f"transaction timeline of {view['transactional_id']}")
    for band in view["states"]:
        state = band["state"] or "?"
        epoch = "" if band["producer_epoch"] is None else f", epoch {band['producer_epoch']}"
        title = f"{state}{epoch} from {rel(view, band['start_ms'])} to {rel(view, band['end_ms'])}"
        out.extend(plot.state_band(band["start_ms"], band["end_ms"], state, _STATE_COLORS.get(state, "#999"), title))
    out.extend(axis(plot.start, plot.end, plot.height, x))
    out.append(f'<text class="lane-label" x="8" y="{y(0) + 4}">transaction {e(view["transactional_id"])}</text>')
    out.append(f'<text class="lane-label" x="8" y="{y(1) + 4}">producer</text>')
    out.extend(
        f'<g class="lane" data-partition="{e(p)}"><text class="lane-label" x="8" y="{y(row[p]) + 4}">{e(p)}</text></g>'
        for p in partitions
    )
    for ev in events:
        title = e(f"{rel(view, ev['at_ms'])} {ev['kind']} {describe_transaction_event(ev)}")
        level = severity(ev["error"])
        mark = _PRODUCER_MARKS.get(ev["kind"])
        lanes = [1] if mark is not None else []
        if mark is None and (mark := _PARTITION_MARKS.get(ev["kind"])) is not None:
            lanes = [row[p] for p in ev["partitions"] if p in row]
        if mark is None:
            continue
        cls, shape, _ = mark
        if ev["kind"] == "AddPartitionsToTxn" and ev["error"] is None:  # the partitions join the transaction
            out.extend(mark_shape("dot", "mark added", x(ev["at_ms"]), y(row[p])) for p in ev["partitions"] if p in row)
        if ev["kind"] == "markers.written" and (ev["detail"] or {}).get("result") == "ABORT":
            cls += " abort"
        for lane in lanes:
            if ev["kind"] == "fault.markers_held":
                release = min(ev["at_ms"] + (ev["detail"] or {}).get("delay_ms", 0), view["now_ms"])
                out.append(
                    f'<line class="bar held" x1="{x(ev["at_ms"]):.1f}" y1="{y(lane)}" x2="{x(release):.1f}" '
                    f'y2="{y(lane)}"><title>{title}</title></line>'
                )
            drawn = mark_shape(shape, f"mark {cls} {level}".rstrip(), x(ev["at_ms"]), y(lane))
            out.append(f'<g class="event" data-kind="{e(ev["kind"])}">{drawn}<title>{title}</title></g>')
    out.append(now_line(x(view["now_ms"]), plot.height))
    out.append("</svg>")
    return "\n".join(out)


def _legend() -> str:
    e = html.escape
    marks = [m for m in (*_PRODUCER_MARKS.values(), *_PARTITION_MARKS.values()) if m[2]]
    legend = "".join(
        f'<span class="legend-item"><svg width="16" height="16">{mark_shape(shape, f"mark {cls}", 8, 8)}</svg>'
        f"{e(text)}</span>"
        for cls, shape, text in marks
    )
    return legend + "".join(
        f'<span class="legend-item"><svg width="16" height="12"><rect width="16" height="12" fill="{color}"/></svg>'
        f"{state}</span>"
        for state, color in _STATE_COLORS.items()
    )


def render_transaction_html(view: dict[str, Any], refresh_s: int | None = None) -> str:
    e = html.escape
    waits = transaction_waits(view["live"])
    panel = "".join(f"<p>{e(sentence[:1].upper() + sentence[1:])}.</p>" for sentence in waits) or (
        "<p>Nothing pending.</p>"
    )
    event_rows = "".join(
        f'<tr class="{severity(ev["error"])}" data-kind="{e(ev["kind"])}">'
        f"<td>{rel(view, ev['at_ms'])}</td><td>{e(ev['kind'])}</td><td>{e(describe_transaction_event(ev))}</td></tr>"
        for ev in view["events"]
    )
    refresh = f'<meta http-equiv="refresh" content="{refresh_s}">' if refresh_s else ""
    dropped = f" ({view['dropped_events']} older events dropped)" if view["dropped_events"] else ""
    transactional_id = e(view["transactional_id"])
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{refresh}'
        f"<title>Timeline: transaction {transactional_id}</title><style>{CSS}{_TXN_CSS}</style></head><body>"
        f"<h1>Transaction timeline: <span id='transactional-id'>{transactional_id}</span></h1>"
        f"<div class='sub'><span id='state'>{e(transaction_summary(view['live']))}</span>. Time +0 = "
        f"{wall(view, view['origin_ms'])}, now = {rel(view, view['now_ms'])}{dropped}. Also as "
        "<a href='?format=json'>JSON</a> and <a href='?format=text'>text</a>.</div>"
        f"<section id='waiting'><h2>Waiting for</h2>{panel}</section>"
        f"<section id='lanes'>{_svg(view)}<div class='legend'>{_legend()}</div></section>"
        f"<section><h2>Events</h2><table id='events'><tr><th>time</th><th>event</th><th>details</th></tr>"
        f"{event_rows}</table></section></body></html>"
    )
