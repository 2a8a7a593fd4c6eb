"""The operator CLI on a KIP-848 consumer group over TCP: `groups describe` asks ConsumerGroupDescribe and prints
kafka-consumer-groups.sh's Kafka 4 layouts (offsets, --members [--verbose], --state [--verbose]); `groups list
--type` tells the two group types apart."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from cli.main import main
from tests.support.clients import kafka_python_member
from tests.support.consumer_member import STEPWISE_SETTINGS, WireMember
from toolkit.pytest_plugin import GroupBrokerHandle

TOPIC = "cli-cg-topic"
GROUP = "cli-cg"
CLASSIC = "cli-classic"


@pytest.fixture
def group_broker_config() -> dict[str, str]:
    return dict(STEPWISE_SETTINGS)


@pytest.fixture
def reconciling(group_broker: GroupBrokerHandle) -> Iterator[GroupBrokerHandle]:
    """m1 owned all 4 partitions; m2 joined and m1 was told to revoke two (it has not yet): Reconciling."""
    admin = KafkaAdminClient(bootstrap_servers=group_broker.bootstrap_servers)
    admin.create_topics([NewTopic(TOPIC, 4, 1)])
    admin.close()
    m1 = WireMember(group_broker.bootstrap_servers, GROUP, "m1", client_id="client-1")
    m2 = WireMember(group_broker.bootstrap_servers, GROUP, "m2", client_id="client-2")
    m1.join([TOPIC])
    m1.heartbeat()
    group_broker.wait_for_group_blocking(GROUP, state="Stable", members=1)
    m2.join([TOPIC])
    m1.heartbeat()
    yield group_broker
    m1.close()
    m2.close()


def _run(capsys: pytest.CaptureFixture[str], broker: GroupBrokerHandle, *args: str) -> list[list[str]]:
    capsys.readouterr()  # drop what was printed before (the embedded broker's log lines, when it logs to stdout)
    assert main([*args, "--bootstrap-server", broker.bootstrap_servers]) == 0
    return [line.split() for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_describe_shows_each_partitions_current_owner(
    reconciling: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _run(capsys, reconciling, "groups", "describe", GROUP)
    assert lines[0][-2:] == ["2", "member(s)."] and "Reconciling" in lines[0]
    owners = {int(cols[2]): cols[6] for cols in lines[2:]}
    assert sorted(owners.values()) == ["m1", "m1", "m2", "m2"] or set(owners.values()) == {"m1"}
    assert all(cols[3:6] == ["-", "0", "-"] for cols in lines[2:])  # nothing committed, empty log


def test_describe_members_verbose_shows_kafka_4s_epochs_and_assignments(
    reconciling: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _run(capsys, reconciling, "groups", "describe", GROUP, "--members", "--verbose")
    assert lines[0] == [
        "GROUP",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
        "CURRENT-EPOCH",
        "CURRENT-ASSIGNMENT",
        "TARGET-EPOCH",
        "TARGET-ASSIGNMENT",
    ]
    rows = {cols[1]: cols for cols in lines[1:]}
    group = reconciling.group(GROUP)
    assert group is not None
    details = {d["member_id"]: d for d in group["member_details"]}
    kept = ",".join(str(p) for p in details["m1"]["assigned"][TOPIC])
    given = ",".join(str(p) for p in details["m2"]["target"][TOPIC])
    assert rows["m1"][3:] == ["client-1", "2", "2", f"{TOPIC}:{kept}", "3", f"{TOPIC}:{kept}"]
    assert rows["m2"][3:] == ["client-2", "0", "3", "-", "3", f"{TOPIC}:{given}"]
    plain = _run(capsys, reconciling, "groups", "describe", GROUP, "--members")
    assert plain[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]


def test_describe_state_shows_the_assignor_and_with_verbose_the_epochs(
    reconciling: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    header, row = _run(capsys, reconciling, "groups", "describe", GROUP, "--state", "--verbose")
    assert " ".join(header) == (
        "GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE GROUP-EPOCH TARGET-ASSIGNMENT-EPOCH #MEMBERS"
    )
    assert row[0] == GROUP and row[1].startswith("127.0.0.1:") and row[2] == "(1)"  # host:port  (node id)
    assert row[3:] == ["uniform", "Reconciling", "3", "3", "2"]
    header, row = _run(capsys, reconciling, "groups", "describe", GROUP, "--state")
    assert " ".join(header) == "GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS"
    assert row[3:] == ["uniform", "Reconciling", "2"]


def test_a_classic_group_is_described_with_describe_groups_in_the_same_layouts(
    reconciling: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    with kafka_python_member(reconciling.bootstrap_servers, [TOPIC], CLASSIC):
        members = _run(capsys, reconciling, "groups", "describe", CLASSIC, "--members", "--verbose")
        _, state = _run(capsys, reconciling, "groups", "describe", CLASSIC, "--state", "--verbose")
        listed = _run(capsys, reconciling, "groups", "list", "--type", "--state")
    assert members[1][-5:] == ["4", "-", f"{TOPIC}:0,1,2,3", "-", "-"]
    assert state[3:] == ["range", "Stable", "-", "-", "1"]
    assert listed[0] == ["GROUP", "TYPE", "STATE"] and [CLASSIC, "Classic", "Stable"] in listed


def test_list_with_type_shows_a_consumer_group(
    reconciling: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = _run(capsys, reconciling, "groups", "list", "--type", "--state")
    assert [GROUP, "Consumer", "Reconciling"] in listed
