"""The broker process starts, answers a real client, and shuts down cleanly on SIGTERM."""

from __future__ import annotations

from pathlib import Path

from kafka import KafkaAdminClient

from tests.support.broker_process import BrokerProcess


def test_broker_process_serves_a_client_and_exits_zero_on_sigterm(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    bootstrap = broker.start()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        assert "__consumer_offsets" in admin.list_topics()
    finally:
        admin.close()
    assert broker.stop() == 0
    assert any('"broker.stopped"' in line for line in broker.log_lines())
