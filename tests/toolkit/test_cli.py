"""The operator CLI over the wire: describe shows kafka-consumer-groups.sh's columns with the right lag; reset
follows Kafka's rules (inactive groups only, dry run unless --execute)."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from cli.main import main
from coordinator.hashing import partition_for
from tests.support.broker_process import FAST_GROUPS, running_broker, wait_until
from toolkit.pytest_plugin import GroupBrokerHandle

TOPIC = "cli-topic"
GROUP = "cli-group"


def _prepare(broker: GroupBrokerHandle) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    admin.create_topics([NewTopic(TOPIC, 2, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    for partition, count in ((0, 5), (1, 3)):
        for i in range(count):
            producer.send(TOPIC, value=b"x%d" % i, partition=partition)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=GROUP, enable_auto_commit=False)
    consumer.commit(
        {TopicPartition(TOPIC, 0): OffsetAndMetadata(2, "", -1), TopicPartition(TOPIC, 1): OffsetAndMetadata(3, "", -1)}
    )
    consumer.close()


def _rows(output: str) -> dict[int, list[str]]:
    lines = output.strip().splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.startswith("GROUP"))
    assert lines[header_at].split() == [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
    ]
    return {int(cols[2]): cols for cols in (line.split() for line in lines[header_at + 1 :])}


def test_describe_shows_committed_offsets_log_end_and_lag(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepare(group_broker)
    assert main(["groups", "list", "--bootstrap-server", group_broker.bootstrap_servers]) == 0
    assert GROUP in capsys.readouterr().out.split()
    assert main(["groups", "describe", GROUP, "--bootstrap-server", group_broker.bootstrap_servers]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows[0][:6] == [GROUP, TOPIC, "0", "2", "5", "3"]
    assert rows[1][:6] == [GROUP, TOPIC, "1", "3", "3", "0"]
    assert rows[0][6:] == ["-", "-", "-"]  # no active member owns the partition


def test_reset_to_latest_is_a_dry_run_until_execute(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepare(group_broker)
    bootstrap = group_broker.bootstrap_servers
    assert main(["offsets", "reset", GROUP, "--to-latest", "--bootstrap-server", bootstrap]) == 0
    capsys.readouterr()
    main(["groups", "describe", GROUP, "--bootstrap-server", bootstrap])
    assert _rows(capsys.readouterr().out)[0][3] == "2"  # unchanged by the dry run
    assert main(["offsets", "reset", GROUP, "--to-latest", "--execute", "--bootstrap-server", bootstrap]) == 0
    capsys.readouterr()
    main(["groups", "describe", GROUP, "--bootstrap-server", bootstrap])
    rows = _rows(capsys.readouterr().out)
    assert (rows[0][3], rows[0][5], rows[1][3]) == ("5", "0", "3")
    assert (
        main(
            [
                "offsets",
                "reset",
                GROUP,
                "--to-offset",
                "1",
                "--topic",
                TOPIC,
                "--execute",
                "--bootstrap-server",
                bootstrap,
            ]
        )
        == 0
    )
    capsys.readouterr()
    main(["groups", "describe", GROUP, "--bootstrap-server", bootstrap])
    assert [r[3] for r in _rows(capsys.readouterr().out).values()] == ["1", "1"]


def test_reset_refuses_an_active_group_like_kafka(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepare(group_broker)
    consumer = Consumer(
        {
            "bootstrap.servers": group_broker.bootstrap_servers,
            "group.id": GROUP,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
        }
    )
    consumer.subscribe([TOPIC])
    try:
        wait_until(consumer.assignment, what="confluent-kafka's assignment", step=lambda: consumer.poll(0.1))
        group_broker.wait_for_group_blocking(GROUP, state="Stable")
        code = main(
            [
                "offsets",
                "reset",
                GROUP,
                "--to-earliest",
                "--execute",
                "--bootstrap-server",
                group_broker.bootstrap_servers,
            ]
        )
        assert code == 1
        assert "can only be reset if the group 'cli-group' is inactive" in capsys.readouterr().err
    finally:
        consumer.close()


def test_timeline_and_dump_log_commands_against_a_broker_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`groups timeline` reads the control API of a running broker; `dump-log` decodes its `__consumer_offsets`."""
    with running_broker(tmp_path / "data", {"control.listener": "http://127.0.0.1:0"}) as process:
        control = next(line.split("=", 1)[1].strip() for line in process.log_lines() if line.startswith("CONTROL="))
        consumer = KafkaConsumer(bootstrap_servers=process.bootstrap, group_id="timed", enable_auto_commit=False)
        consumer.commit({TopicPartition("__consumer_offsets", 0): OffsetAndMetadata(7, "note", -1)})
        consumer.close()
        assert main(["groups", "timeline", "timed", "--control", control]) == 0
        assert "timed" in capsys.readouterr().out
    partition = partition_for("timed", int(FAST_GROUPS["offsets.topic.num.partitions"]))
    assert main(["dump-log", str(tmp_path / "data" / f"__consumer_offsets-{partition}"), "--offsets-decoder"]) == 0
    dumped = capsys.readouterr().out
    assert "offset_commit::group=timed,partition=__consumer_offsets-0" in dumped
    assert "offset=7,leaderEpoch=-1,metadata=note" in dumped


def test_reset_prints_kafkas_new_offset_table(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    """kafka-consumer-groups.sh --reset-offsets prints GROUP, TOPIC, PARTITION, NEW-OFFSET; a dry run says so on
    stderr, so stdout is only the table."""
    _prepare(group_broker)
    assert main(["offsets", "reset", GROUP, "--to-earliest", "--bootstrap-server", group_broker.bootstrap_servers]) == 0
    captured = capsys.readouterr()
    table = captured.out[captured.out.index("GROUP ") :]  # the in-process broker still logs to stdout here
    assert table == (
        "GROUP           TOPIC           PARTITION  NEW-OFFSET\n"
        "cli-group       cli-topic       0          0\n"
        "cli-group       cli-topic       1          0\n"
    )
    assert "Dry run" in captured.err
