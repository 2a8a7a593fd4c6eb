"""The broker benchmark's consumer-protocol (KIP-848) tables, run tiny so that path cannot rot.

No timing is asserted: only that a peer serving ConsumerGroupHeartbeat yields figures (a formed group, heartbeats
answered without error) and that a peer without it shows "not served" instead of failing the benchmark.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from bench import bench_broker
from bench.consumer_group_load import ConsumerGroupRun, NotServed
from bench.group_protocols import CONSUMER, GroupProtocol, consumer_topic
from bench.peers import OURS_SETTINGS, Peer, peers, started
from bench.wire_load import ServerProcess, run_async
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatResponse

MEMBERS = 3


def _tiny(sizes: tuple[int, ...] = (MEMBERS,)) -> GroupProtocol:
    return dataclasses.replace(CONSUMER, formation_sizes=sizes, topics={consumer_topic(n): n for n in sizes})


def _peer(name: str) -> Peer:
    return next(peer for peer in peers() if peer.name == name)


@pytest.fixture
def tiny_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(bench_broker.FORMATION_RUNS, MEMBERS, 1)
    monkeypatch.setattr(bench_broker, "HB_MEMBERS", MEMBERS)
    monkeypatch.setattr(bench_broker, "HB_WINDOWS", 1)
    monkeypatch.setattr(bench_broker, "HB_WINDOW_S", 0.2)


@pytest.mark.parametrize(
    "name",
    [
        "ours",
        pytest.param(
            "mock",
            marks=pytest.mark.skipif(not ServerProcess.mock_available(), reason="no librdkafka mock_cluster.py here"),
        ),
    ],
)
def test_a_consumer_group_forms_and_heartbeats(name: str, tmp_path: Path, tiny_runs: None) -> None:
    peer = _peer(name)
    protocol = _tiny()

    with started(peer, tmp_path, protocol.topics) as server:
        make_group = protocol.connect(peer, server, bench_broker.FORMATION_TIMEOUT_MS).make_group
        formed = run_async(bench_broker._formation_runs(server, MEMBERS, 1, make_group, "test"))
        beats = run_async(bench_broker._heartbeat_windows(server, make_group))

    assert formed.gave_up is None and len(formed.seconds) == 1
    assert formed.requests_per_member[0] >= 2  # a join and an acknowledgement each, at least
    assert len(beats) == 1 and beats[0].rate > 0 and beats[0].failures == 0


def test_a_broker_without_the_consumer_protocol_is_not_served_and_the_table_says_so(
    tmp_path: Path, tiny_runs: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # group-broker with the consumer protocol switched off, as Kafka's group.coordinator.rebalance.protocols=classic
    classic_only = dataclasses.replace(
        _peer("ours"),
        make=lambda work_dir: ServerProcess.ours(
            work_dir, {**OURS_SETTINGS, "group.coordinator.rebalance.protocols": "classic"}
        ),
    )
    bench_broker.formation([classic_only], _tiny())

    table = capsys.readouterr().out
    assert f"N={MEMBERS}: median (ms)" in table
    assert "not served" in table.split(f"N={MEMBERS}: median (ms)", 1)[1].splitlines()[0]


class _UnsupportedConnection:
    """Answers every request as a broker that has the API but refuses it (Kafka with the consumer protocol off)."""

    async def call(self, api_key: int, version: int, body: object) -> ConsumerGroupHeartbeatResponse:
        return ConsumerGroupHeartbeatResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)


def test_an_unsupported_version_answer_means_not_served_rather_than_a_failure() -> None:
    group = ConsumerGroupRun("g", [_UnsupportedConnection()], topic="t", partitions=1, version=1)  # type: ignore[list-item]

    with pytest.raises(NotServed, match="UNSUPPORTED_VERSION"):
        asyncio.run(asyncio.wait_for(group.form(), 10))


class _FailingGroup:
    """A group whose formation fails with an error answer (as group-broker's COORDINATOR_NOT_AVAILABLE once did)."""

    formation_requests = 0

    async def form(self) -> float:
        raise RuntimeError("ConsumerGroupHeartbeat error 15")


def test_a_formation_size_that_fails_is_reported_with_its_error_instead_of_failing_the_peer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def no_connections(host: str, port: int, count: int) -> list[object]:
        return []

    monkeypatch.setattr(bench_broker, "open_connections", no_connections)
    server = ServerProcess(["unused"], "ours")

    result = run_async(
        bench_broker._formation_runs(server, MEMBERS, 2, lambda group_id, connections: _FailingGroup(), "t")  # type: ignore[arg-type, return-value]
    )

    assert result.seconds == [] and result.gave_up == "failed"
    assert result.error == "RuntimeError: ConsumerGroupHeartbeat error 15"
