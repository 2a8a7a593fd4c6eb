"""The rebalance timeline: JSON, text, and the HTML swim-lane page as headless Chromium renders it.

Two raw members (exact requests, no client library deciding when to heartbeat) play a scale-out rebalance that
one of them never rejoins: A joins with a reason (JoinGroup v9), syncs and heartbeats; B joins and is parked; the
page must then show the rebalance waiting for A, with A's session timer. Virtual time then fires the rebalance
timeout: A is expired, B's JoinGroup completes, B syncs and leaves with a reason (LeaveGroup v5).

Chromium (Debian's `chromium`, installed by `make test`) loads the page from the broker's control API; the test
asserts on the DOM it renders and saves screenshots under `test-artifacts/` (gitignored) for a human to look at.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.sync_group import SyncGroupRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from toolkit.embedded import EmbeddedBroker

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
GROUP = "timeline-group"
SUBSCRIPTION = b"\x00\x00\x00\x00\x00\x01\x00\x07toolkit\xff\xff\xff\xff"
SESSION_MS = 30_000
REBALANCE_MS = 10_000


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(
            "chromium is not installed: the timeline page is checked in headless Chromium. `make test` installs "
            "Debian's chromium when missing; by hand: apt-get install -y chromium"
        )
    return found


def _run_chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"chromium failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return done


def render(profile: Path, url: str, screenshot: str) -> str:
    """Load `url` in headless Chromium: return the DOM it rendered and save a 1200x800 screenshot (one run)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / screenshot
    path.unlink(missing_ok=True)
    done = _run_chromium(
        profile, f"--screenshot={path}", "--window-size=1200,800", "--hide-scrollbars", "--dump-dom", url
    )
    assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"chromium wrote no PNG to {path}"
    assert "</html>" in done.stdout, f"chromium dumped no DOM:\n{done.stdout[:2000]}"
    return done.stdout


@pytest.fixture
def broker() -> Iterator[EmbeddedBroker]:
    embedded = EmbeddedBroker({"control.listener": "http://127.0.0.1:0"}).start()
    try:
        yield embedded
    finally:
        embedded.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def _get_json(http: aiohttp.ClientSession, url: str) -> Any:
    async with http.get(url) as answer:
        assert answer.status == 200, await answer.text()
        return await answer.json()


def _join_request(member_id: str, reason: str) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=GROUP,
        session_timeout_ms=SESSION_MS,
        rebalance_timeout_ms=REBALANCE_MS,
        member_id=member_id,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
        reason=reason,
    )


async def _join(client: WireClient, reason: str) -> JoinGroupResponse:
    first = await client.call(ApiKey.JOIN_GROUP, 9, _join_request("", reason))
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    joined: JoinGroupResponse = await client.call(ApiKey.JOIN_GROUP, 9, _join_request(first.member_id, reason))
    assert joined.error_code == ErrorCode.NONE
    return joined


async def _sync(client: WireClient, joined: JoinGroupResponse) -> None:
    synced = await client.call(
        ApiKey.SYNC_GROUP,
        5,
        SyncGroupRequest(
            group_id=GROUP,
            generation_id=joined.generation_id,
            member_id=joined.member_id,
            protocol_type="consumer",
            protocol_name="range",
        ),
    )
    assert synced.error_code == ErrorCode.NONE


async def test_timeline_shows_who_a_rebalance_waits_for_in_json_text_and_chromium(
    broker: EmbeddedBroker, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    control = broker.control_url
    assert control is not None
    port = int(broker.bootstrap_servers.rsplit(":", 1)[1])
    page = f"{control}/groups/{GROUP}/timeline"
    a, b = await WireClient.connect(port), await WireClient.connect(port)

    # A forms the group alone: generation 1
    joined_a = await _join(a, "startup")
    member_a = joined_a.member_id
    await _sync(a, joined_a)
    beat = HeartbeatRequest(group_id=GROUP, generation_id=joined_a.generation_id, member_id=member_a)
    assert (await a.call(ApiKey.HEARTBEAT, 4, beat)).error_code == ErrorCode.NONE

    # B joins: the rebalance waits for A, B's JoinGroup stays parked
    b_join = asyncio.ensure_future(_join(b, "scale out"))
    deadline = asyncio.get_running_loop().time() + 10
    while not (view := await _get_json(http, f"{page}?format=json"))["pending"]:
        assert asyncio.get_running_loop().time() < deadline, view
        await asyncio.sleep(0.02)
    assert (await a.call(ApiKey.HEARTBEAT, 4, beat)).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    view = await _get_json(http, f"{page}?format=json")

    live = view["live"]
    assert live["state"] == "PreparingRebalance"
    assert [m["member_id"] for m in live["waiting_for"]] == [member_a]
    waiting = live["waiting_for"][0]
    assert waiting["client_id"] == "wire-test"
    assert waiting["session_deadline_ms"] is not None and 0 < waiting["session_fires_in_ms"] <= SESSION_MS
    assert live["rebalance_deadline_ms"] is not None and 0 < live["rebalance_fires_in_ms"] <= REBALANCE_MS
    assert [(p["api"], p["reason"]) for p in view["pending"]] == [("JoinGroup", "scale out")]
    member_b = view["pending"][0]["member"]
    assert member_b and member_b != member_a
    assert [lane["member"] for lane in view["lanes"]] == [member_a, member_b]
    events = view["events"]
    requests = [(e["kind"], e["member"], e["generation"], e["error"], e["reason"]) for e in events if e["client_id"]]
    assert ("JoinGroup", member_a, -1, "MEMBER_ID_REQUIRED", "startup") in requests
    assert ("JoinGroup", member_a, 1, "NONE", "startup") in requests
    assert ("SyncGroup", member_a, 1, "NONE", None) in requests
    assert ("Heartbeat", member_a, 1, "NONE", None) in requests
    assert ("Heartbeat", member_a, 1, "REBALANCE_IN_PROGRESS", None) in requests
    started = [e for e in events if e["kind"] == "rebalance.started"]
    assert "client reason: scale out" in started[-1]["reason"]
    assert view["rebalances"][0]["outcome"] == "completed" and view["rebalances"][0]["generation"] == 1
    assert view["rebalances"][-1]["end_ms"] is None  # the scale-out rebalance is still on
    assert [e["at_ms"] for e in events] == sorted(e["at_ms"] for e in events)

    async with http.get(page, params={"format": "text"}) as answer:
        text = await answer.text()
    assert answer.content_type == "text/plain"
    assert "state=PreparingRebalance" in text
    assert "waiting for 1 member(s); rebalance timeout fires in" in text
    assert f"    {member_a} client=wire-test session timer fires at" in text
    assert f"pending JoinGroup from {member_b}" in text
    assert 'reason="scale out"' in text
    async with http.get(page, headers={"Accept": "application/json"}) as answer:
        assert answer.content_type == "application/json"

    # the HTML page, rendered by a real browser
    profile = tmp_path / "chromium-profile"
    dom = render(profile, page, "timeline-waiting.png")
    assert '<svg xmlns="http://www.w3.org/2000/svg" id="swimlanes"' in dom
    assert f'<g class="lane" data-member="{member_a}">' in dom
    assert f'<g class="lane" data-member="{member_b}">' in dom
    assert f'<tr class="waiting-member" data-member="{member_a}">' in dom
    assert "Waiting for 1 member(s) to send JoinGroup" in dom
    assert "Rebalance timeout fires at" in dom
    assert 'class="rebalance open"' in dom and 'class="rebalance closed"' in dom
    assert 'class="bar pending"' in dom
    assert 'data-state="PreparingRebalance"' in dom and 'data-state="Stable"' in dom
    assert dom.count('<g class="event" data-kind="Heartbeat">') == 2
    assert 'class="mark heartbeat signal"' in dom  # the heartbeat that told A to rejoin
    assert "session fires in" in dom
    assert 'reason="scale out"' in dom

    # virtual time: the rebalance timeout fires, A (never rejoined) is expired, B's JoinGroup completes
    async with http.post(f"{control}/time/advance", json={"ms": REBALANCE_MS + 1}) as answer:
        assert answer.status == 200
    joined_b = await asyncio.wait_for(b_join, 10)
    assert joined_b.generation_id == 2 and joined_b.member_id == member_b
    await _sync(b, joined_b)
    left = await b.call(
        ApiKey.LEAVE_GROUP,
        5,
        LeaveGroupRequest(group_id=GROUP, members=[MemberIdentity(member_id=member_b, reason="shutting down")]),
    )
    assert left.error_code == ErrorCode.NONE

    view = await _get_json(http, f"{page}?format=json")
    assert view["live"]["state"] == "Empty" and view["pending"] == []
    kinds = [(e["kind"], e["member"]) for e in view["events"]]
    assert ("member.expired", member_a) in kinds
    assert ("JoinGroup", member_b) in kinds and ("SyncGroup", member_b) in kinds
    assert ("member.left", member_b) in kinds
    expired = next(e for e in view["events"] if e["kind"] == "member.expired")
    assert expired["detail"] is None or "group_instance_id" in expired["detail"]
    leave = next(e for e in view["events"] if e["kind"] == "LeaveGroup")
    assert (leave["member"], leave["reason"], leave["error"]) == (member_b, "shutting down", "NONE")
    join_b = [e for e in view["events"] if e["kind"] == "JoinGroup" and e["member"] == member_b][-1]
    assert join_b["generation"] == 2 and join_b["parked_ms"] >= REBALANCE_MS  # parked until the timeout fired
    # B's leave starts a last rebalance, which ends with the group Empty (generation 3)
    assert [(r["outcome"], r["generation"]) for r in view["rebalances"]] == [
        ("completed", 1),
        ("completed", 2),
        ("Empty", 3),
    ]
    no_beats = await _get_json(http, f"{page}?format=json&heartbeats=0")
    assert all(e["kind"] != "Heartbeat" for e in no_beats["events"])

    dom = render(profile, page, "timeline-final.png")
    assert "No rebalance in progress" in dom
    assert '<g class="event" data-kind="member.expired">' in dom
    assert '<g class="event" data-kind="LeaveGroup">' in dom
    assert 'class="rebalance open"' not in dom
    await a.close()
    await b.close()


async def test_timeline_is_404_for_an_unknown_group_and_bounded(http: aiohttp.ClientSession) -> None:
    embedded = EmbeddedBroker(
        {"control.listener": "http://127.0.0.1:0", "timeline.max.groups": "2", "timeline.events.per.group": "3"}
    ).start()
    try:
        control = embedded.control_url
        async with http.get(f"{control}/groups/nobody/timeline") as answer:
            assert answer.status == 404
            assert "nobody" in (await answer.json())["error"]
        port = int(embedded.bootstrap_servers.rsplit(":", 1)[1])
        client = await WireClient.connect(port)
        for group in ("g1", "g2", "g3"):
            for generation in range(5):
                beat = HeartbeatRequest(group_id=group, generation_id=generation, member_id="ghost")
                assert (await client.call(ApiKey.HEARTBEAT, 4, beat)).error_code == ErrorCode.UNKNOWN_MEMBER_ID
        await client.close()
        timeline = embedded.kit.timeline
        assert embedded.call(timeline.group_ids) == ["g2", "g3"]  # g1, the least recently active, was dropped
        view = await _get_json(http, f"{control}/groups/g3/timeline?format=json")
        assert view["live"] is None  # heartbeats to a group that does not exist are still on its timeline
        assert [e["generation"] for e in view["events"]] == [2, 3, 4]
        assert view["dropped_events"] == 2
    finally:
        embedded.stop()
