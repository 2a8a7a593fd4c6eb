"""A member the coordinator loaded at restart (from its GroupMetadata record) and which left no request on this
broker's timeline is labelled with the client id from that record, or `-` when nothing knows it, the way
kafka-consumer-groups.sh shows a missing value; never "client None" (issue #12)."""

from __future__ import annotations

from typing import Any

from toolkit.timeline.html import render_html
from toolkit.timeline.live import lanes
from toolkit.timeline.model import Timeline, TimelineEvent
from toolkit.timeline.text import render_text


def _loaded_member_expired() -> Timeline:
    """What a restart then a session expiry leaves: coordinator events only, none carrying the client id."""
    timeline = Timeline(lambda: 1_000)
    timeline.on_event("group.loaded", {"group": "g", "state": "Stable", "generation": 3, "members": 1})
    timeline.on_event("member.expired", {"group": "g", "member": "app-1-uuid", "reason": "session timeout"})
    return timeline


def test_a_lane_takes_the_client_id_the_coordinator_loaded_from_the_group_metadata_record() -> None:
    events = [TimelineEvent(5, "member.expired", "app-1-uuid")]
    live: dict[str, Any] = {"members": [{"member_id": "app-1-uuid", "client_id": "app-1"}]}
    assert lanes(events, [], live) == [{"member": "app-1-uuid", "client_id": "app-1"}]


def test_an_unknown_client_id_is_a_dash_in_every_rendering() -> None:
    view = _loaded_member_expired().view("g", None, 2_000, 0)
    assert view is not None
    assert view["lanes"] == [{"member": "app-1-uuid", "client_id": None}]  # JSON keeps null: unknown
    html = render_html(view)
    assert "client None" not in html
    assert ">client -</text>" in html
    assert "None" not in render_text(view)
