"""The toolkit on KIP-848 consumer groups, against the embedded broker with raw-wire consumer-protocol members:
the group snapshot (epochs, target vs current per member), the faults (ConsumerGroupHeartbeat errors, expire a
member, force a new target assignment) and `wait_for_group` under frozen time naming what reconciliation waits for."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from protocol.errors import ErrorCode
from tests.support.consumer_member import STEPWISE_SETTINGS, WireMember
from toolkit.pytest_plugin import FrozenTimeError, GroupBrokerHandle

TOPIC = "cg-topic"
GROUP = "cg-toolkit"


@pytest.fixture
def group_broker_config() -> dict[str, str]:
    return dict(STEPWISE_SETTINGS)


@pytest.fixture
def members(group_broker: GroupBrokerHandle) -> Iterator[tuple[WireMember, WireMember]]:
    admin = KafkaAdminClient(bootstrap_servers=group_broker.bootstrap_servers)
    admin.create_topics([NewTopic(TOPIC, 4, 1)])
    admin.close()
    m1 = WireMember(group_broker.bootstrap_servers, GROUP, "m1")
    m2 = WireMember(group_broker.bootstrap_servers, GROUP, "m2")
    yield m1, m2
    m1.close()
    m2.close()


def _stable_with_one(broker: GroupBrokerHandle, m1: WireMember) -> dict[str, object]:
    m1.join([TOPIC])
    m1.heartbeat()
    return broker.wait_for_group_blocking(GROUP, state="Stable", members=1, timeout_s=10)


def _m1_must_revoke(broker: GroupBrokerHandle, m1: WireMember, m2: WireMember) -> None:
    _stable_with_one(broker, m1)
    m2.join([TOPIC])
    m1.heartbeat()  # told to give two partitions up; it does not confirm yet


def test_the_snapshot_shows_epochs_and_each_members_current_and_target_partitions(
    group_broker: GroupBrokerHandle, members: tuple[WireMember, WireMember]
) -> None:
    m1, m2 = members
    stable = _stable_with_one(group_broker, m1)
    # Kafka 4.4 (KAFKA-20268): a new group stands at epoch 1, so the first join writes epoch 2
    assert (stable["group_type"], stable["group_epoch"], stable["assignment_epoch"]) == ("consumer", 2, 2)
    [only] = stable["member_details"]  # type: ignore[misc]
    assert only["assigned"] == only["target"] == {TOPIC: [0, 1, 2, 3]} and only["member_state"] == "STABLE"
    m2.join([TOPIC])
    m1.heartbeat()
    group = group_broker.group(GROUP)
    assert group is not None and group["state"] == "Reconciling" and group["group_epoch"] == 3
    details = {d["member_id"]: d for d in group["member_details"]}
    revoking = details["m1"]["pending_revocation"][TOPIC]
    assert details["m1"]["member_state"] == "UNREVOKED_PARTITIONS" and details["m2"]["target"] == {TOPIC: revoking}
    spelled = ",".join(f"{TOPIC}-{p}" for p in revoking)
    assert group["waiting_for"] == [
        f"waiting for member m1 to revoke partitions {spelled}",
        f"member m2 waits for partitions {spelled} held by m1",
    ]
    for _ in range(3):  # m1 confirms, m2 takes the released partitions, m1 catches up with the epoch
        m1.heartbeat()
        m2.heartbeat()
    done = group_broker.wait_for_group_blocking(GROUP, state="Stable", members=2, generation_at_least=3)
    assert done["waiting_for"] == [] and m1.owned_partitions() == m2.owned_partitions() == 2


def test_a_frozen_wait_names_the_revocation_timer_and_who_waits_for_whom(
    group_broker: GroupBrokerHandle, members: tuple[WireMember, WireMember]
) -> None:
    m1, m2 = members
    _m1_must_revoke(group_broker, m1, m2)
    group_broker.freeze_time()
    with pytest.raises(FrozenTimeError) as failed:
        group_broker.wait_for_group_blocking(GROUP, state="Stable", timeout_s=30, frozen_grace_s=0.1)
    message = str(failed.value)
    assert "(Reconciling, group epoch 3, assignment epoch 3)" in message
    # real time flowed between the heartbeats and the freeze: the deadlines are a few ms closer than configured
    revocation = re.search(r"revocation timeout of member m1 due at \+(\d+) ms", message)
    assert revocation is not None and 29_000 < int(revocation[1]) <= 30_000
    assert re.search(r"session of member m2 due at \+\d+ ms", message)
    assert f"call advance({revocation[1]})" in message
    assert "Reconciliation: waiting for member m1 to revoke partitions cg-topic-" in message
    assert "; member m2 waits for partitions cg-topic-" in message and "held by m1" in message


def test_expire_member_fences_a_consumer_member_and_bumps_the_group_epoch(
    group_broker: GroupBrokerHandle, members: tuple[WireMember, WireMember]
) -> None:
    m1, m2 = members
    _m1_must_revoke(group_broker, m1, m2)
    assert group_broker.expire_member(GROUP, "m1")
    group = group_broker.group(GROUP)
    # the fence bumps the group epoch; the new target (all four partitions for m2) comes with m2's next heartbeat
    assert group is not None and group["members"] == ["m2"]
    assert (group["state"], group["group_epoch"], group["assignment_epoch"]) == ("Assigning", 4, 3)
    assert m1.heartbeat().error_code == ErrorCode.UNKNOWN_MEMBER_ID
    m2.heartbeat()
    assert m2.owned_partitions() == 4
    assert group_broker.wait_for_group_blocking(GROUP, state="Stable", members=1)["assignment_epoch"] == 4
    assert not group_broker.expire_member(GROUP, "m1")


def test_force_target_assignment_makes_the_next_heartbeat_compute_a_new_target(
    group_broker: GroupBrokerHandle, members: tuple[WireMember, WireMember]
) -> None:
    m1, _ = members
    _stable_with_one(group_broker, m1)
    assert group_broker.force_target_assignment(GROUP, reason="test")
    group = group_broker.group(GROUP)
    assert group is not None and (group["state"], group["group_epoch"], group["assignment_epoch"]) == (
        "Assigning",
        3,
        2,
    )
    assert m1.heartbeat().member_epoch == 3
    assert group_broker.wait_for_group_blocking(GROUP, state="Stable", generation_at_least=3)["assignment_epoch"] == 3
    assert not group_broker.force_target_assignment("no-such-group")


def test_consumer_group_heartbeat_errors_are_injected_per_group(
    group_broker: GroupBrokerHandle, members: tuple[WireMember, WireMember]
) -> None:
    m1, _ = members
    _stable_with_one(group_broker, m1)
    group_broker.inject_error("ConsumerGroupHeartbeat", "COORDINATOR_NOT_AVAILABLE", count=2, group_id=GROUP)
    assert [m1.heartbeat().error_code for _ in range(3)] == [
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NONE,
    ]


def test_a_partition_the_coordinator_unloads_after_a_failed_write_is_loaded_again_from_the_log(
    group_broker: GroupBrokerHandle, members: tuple[WireMember, WireMember]
) -> None:
    """The broker side of an undo that cannot be done in memory (tests/coordinator/consumer_group/
    test_write_failures.py): the coordinator unloads the partition and the broker reads its log and loads it
    again, so the group is served with exactly what was written."""
    m1, _m2 = members
    before = _stable_with_one(group_broker, m1)
    embedded = group_broker._embedded
    broker = embedded.kit.broker
    partition = broker.coordinator.partition_for(GROUP)

    def unload_for_reload() -> None:
        broker.coordinator._reload(partition, "test: a failed write had later writes")  # what an undo asks for
        broker._start_reloads()

    embedded.call(unload_for_reload)
    reloaded = group_broker.wait_for_group_blocking(GROUP, state="Stable", members=1, timeout_s=10)
    assert reloaded["group_epoch"] == before["group_epoch"]
    assert embedded.call(lambda: broker.coordinator.owned_partitions()[partition]) == "active"
    m1.heartbeat()
    assert m1.owned_partitions() == 4
