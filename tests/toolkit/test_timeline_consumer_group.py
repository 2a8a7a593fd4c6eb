"""The rebalance timeline of a KIP-848 consumer group, from the control API of the embedded broker.

Two raw-wire consumer-protocol members play a scale-out: m1 owns all four partitions, m2 joins, m1 is told to
revoke two and does not confirm yet. The timeline must then show what the group is doing (its epochs, each member's
epoch, state, current and target partitions, what m1 still has to revoke and when its revocation timeout fires) and
record every ConsumerGroupHeartbeat as a heartbeat, as it does classic Heartbeats.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from tests.support.consumer_member import STEPWISE_SETTINGS, WireMember
from toolkit.embedded import EmbeddedBroker
from toolkit.timeline.html import render_html

TOPIC = "tl-topic"
GROUP = "tl-consumer"
REVOCATION_MS = 30_000


@pytest.fixture
def broker() -> Iterator[EmbeddedBroker]:
    embedded = EmbeddedBroker({"control.listener": "http://127.0.0.1:0", **STEPWISE_SETTINGS}).start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=embedded.bootstrap_servers)
        admin.create_topics([NewTopic(TOPIC, 4, 1)])
        admin.close()
        yield embedded
    finally:
        embedded.stop()


@pytest.fixture
def members(broker: EmbeddedBroker) -> Iterator[tuple[WireMember, WireMember]]:
    m1 = WireMember(broker.bootstrap_servers, GROUP, "m1", client_id="client-1")
    m2 = WireMember(broker.bootstrap_servers, GROUP, "m2", client_id="client-2")
    m1.join([TOPIC], rebalance_timeout_ms=REVOCATION_MS)
    m1.heartbeat()
    m2.join([TOPIC])
    m1.heartbeat()  # told to give two partitions up; it does not confirm yet
    yield m1, m2
    m1.close()
    m2.close()


def _get(broker: EmbeddedBroker, query: str) -> str:
    with urllib.request.urlopen(f"{broker.control_url}/groups/{GROUP}/timeline?{query}", timeout=10) as answer:
        assert answer.status == 200
        return answer.read().decode()  # type: ignore[no-any-return]


def _view(broker: EmbeddedBroker, query: str = "") -> dict[str, Any]:
    return json.loads(_get(broker, f"format=json&{query}"))  # type: ignore[no-any-return]


def test_live_state_shows_the_epochs_and_each_members_current_and_target_partitions(
    broker: EmbeddedBroker, members: tuple[WireMember, WireMember]
) -> None:
    live = _view(broker)["live"]
    assert (live["group_type"], live["state"], live["group_epoch"], live["assignment_epoch"]) == (
        "consumer",
        "Reconciling",
        3,
        3,
    )
    assert live["generation"] == 3 and live["protocol"] == "uniform" and live["leader"] is None
    rows = {m["member_id"]: m for m in live["members"]}
    m1, m2 = rows["m1"], rows["m2"]
    revoking = m1["pending_revocation"][TOPIC]
    assert (m1["member_epoch"], m1["member_state"], m1["client_id"]) == (2, "UNREVOKED_PARTITIONS", "client-1")
    assert len(revoking) == 2 and m1["assigned"] == m1["target"] and m1["assigned"][TOPIC] != revoking
    assert 0 < m1["revocation_fires_in_ms"] <= REVOCATION_MS and m1["waited_for"]
    assert (m2["member_epoch"], m2["member_state"], m2["assigned"]) == (3, "UNRELEASED_PARTITIONS", {})
    assert m2["target"] == {TOPIC: revoking} and m2["waits_for"] == {"m1": {TOPIC: revoking}}
    assert m2["revocation_deadline_ms"] is None and m2["session_fires_in_ms"] > 0 and not m2["waited_for"]
    assert [m["member_id"] for m in live["waiting_for"]] == ["m1"]
    spelled = ",".join(f"{TOPIC}-{p}" for p in revoking)
    assert live["reconciliation"] == [
        f"waiting for member m1 to revoke partitions {spelled}",
        f"member m2 waits for partitions {spelled} held by m1",
    ]


def test_consumer_group_heartbeats_are_recorded_as_heartbeats_with_the_member_epoch(
    broker: EmbeddedBroker, members: tuple[WireMember, WireMember]
) -> None:
    view = _view(broker)
    beats = [
        (e["member"], e["client_id"], e["generation"], e["error"])
        for e in view["events"]
        if e["kind"] == "ConsumerGroupHeartbeat"
    ]
    assert beats == [
        ("m1", "client-1", 2, "NONE"),  # the join: KAFKA-20268's first epoch is 2
        ("m1", "client-1", 2, "NONE"),
        ("m2", "client-2", 3, "NONE"),
        ("m1", "client-1", 2, "NONE"),  # still at 2: it owes a revocation
    ]
    assert [lane["member"] for lane in view["lanes"]] == ["m1", "m2"]
    quiet = _view(broker, "heartbeats=0")
    assert all(e["kind"] != "ConsumerGroupHeartbeat" for e in quiet["events"])
    assert {"group.epoch", "group.state"} <= {e["kind"] for e in quiet["events"]}


def test_a_reconciliation_is_a_rebalance_period_from_the_epoch_bump_until_stable(
    broker: EmbeddedBroker, members: tuple[WireMember, WireMember]
) -> None:
    m1, m2 = members
    [*_, open_period] = _view(broker)["rebalances"]
    assert open_period["end_ms"] is None and open_period["reasons"] and "m2" in open_period["reasons"][0]
    for _ in range(3):  # m1 confirms, m2 takes the released partitions, m1 catches up with the epoch
        m1.heartbeat()
        m2.heartbeat()
    view = _view(broker)
    assert view["live"]["state"] == "Stable" and view["live"]["waiting_for"] == []
    [*_, closed] = view["rebalances"]
    assert (closed["outcome"], closed["generation"]) == ("completed", 3) and closed["end_ms"] is not None


def test_text_and_html_show_the_epochs_what_each_member_owes_and_the_revocation_timer(
    broker: EmbeddedBroker, members: tuple[WireMember, WireMember]
) -> None:
    text = _get(broker, "format=text")
    assert "state=Reconciling group_epoch=3 assignment_epoch=3 assignor=uniform members=2" in text
    assert "    m1 client=client-1 epoch=2 UNREVOKED_PARTITIONS current=tl-topic-" in text
    assert "revocation timer fires at +" in text
    assert "    m2 client=client-2 epoch=3 UNRELEASED_PARTITIONS current=- target=tl-topic-" in text
    assert "  waiting for member m1 to revoke partitions tl-topic-" in text
    page = render_html(_view(broker))
    assert "group epoch <b>3</b>, assignment epoch <b>3</b>" in page
    assert 'class="waiting-member" data-member="m1"' in page and "revocation timeout fires" in page
    assert "member m2 waits for partitions tl-topic-" in page
