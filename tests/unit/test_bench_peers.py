"""The broker benchmark's peer list and comparison table (bench/peers.py), without running any benchmark.

`make bench` must print the same tables on every machine: a peer that cannot run (no Java, no fetched Kafka, no
Go-built kfake) keeps its column with "n/a (why)", and importing the bench package must not need the tests package
(nor Java) at all.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from bench import bench_broker
from bench import peers as bench_peers
from bench.peers import Measure, Peer, comparison_table, settings_notes
from bench.wire_load import ROOT
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.produce import PartitionProduceResponse, ProduceResponse, TopicProduceResponse
from protocol.registry import ApiKey


def _peer(name: str, unavailable: str | None = None, short: str | None = None) -> Peer:
    return Peer(name, f"{name} settings", lambda _: pytest.fail("no broker is started here"), unavailable, short)


def test_the_columns_are_ours_mock_kafka_kfake_in_that_order() -> None:
    assert [peer.name for peer in bench_peers.peers()] == ["ours", "mock", "kafka", "kfake"]


def test_without_java_or_the_kfake_binary_their_columns_say_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)  # no java, no go on this "machine"
    monkeypatch.setattr(bench_peers, "KFAKE_BIN", tmp_path / "kfake-bin")
    monkeypatch.setattr(bench_peers, "ROOT", tmp_path)

    columns = {peer.name: peer for peer in bench_peers.peers()}

    assert columns["ours"].available
    assert columns["kafka"].na == "n/a (no Java)"
    assert "Java is not installed" in (columns["kafka"].unavailable or "")
    assert columns["kfake"].na == "n/a (not built: go)"
    assert "make bench-kfake" in (columns["kfake"].unavailable or "")


def test_the_table_has_a_column_per_peer_ratios_to_mock_and_kafka_and_na_with_the_reason() -> None:
    columns = [_peer("ours"), _peer("mock"), _peer("kafka"), _peer("kfake", "no binary", "not built")]
    measures = [
        Measure("heartbeats/s", {"ours": 30_000.0, "mock": 20_000.0, "kafka": 60_000.0, "kfake": 1.0}, "met"),
        Measure("N=1000 (ms)", {"ours": 900.0, "mock": "n/a (did not form in 120 s)", "kafka": 300.0}),
        Measure("CPU", {"ours": 0.5, "mock": 0.25}, spec=".2f", compare=False),
    ]

    header, rows = comparison_table(measures, columns, ",.0f", with_target=True)

    assert header == ("measure", "ours", "mock", "kafka", "kfake", "ours/mock", "ours/kafka", "issue target")
    assert rows == [
        ("heartbeats/s", "30,000", "20,000", "60,000", "n/a (not built)", "1.50", "0.50", "met"),
        ("N=1000 (ms)", "900", "n/a (did not form in 120 s)", "300", "n/a (not built)", "n/a", "3.00", ""),
        ("CPU", "0.50", "0.25", "n/a", "n/a (not built)", "", "", ""),
    ]


def test_every_peer_s_settings_or_why_it_did_not_run_are_noted() -> None:
    notes = settings_notes([_peer("ours"), _peer("kafka", "Java is not installed", "no Java")])

    assert notes == ["ours: ours settings", "kafka: not run: Java is not installed"]


def test_importing_the_bench_package_needs_neither_the_tests_package_nor_java() -> None:
    code = (
        "import sys, bench.bench_broker, bench.bench_security, bench.peers;"
        "print(sorted(m for m in sys.modules if m == 'tests' or m.startswith('tests.')))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, env={"PATH": ""}
    )

    assert shown.stdout.strip() == "[]"


class _AnsweringConnection:
    """Answers every Produce at once: partition 0 with NOT_LEADER_OR_FOLLOWER, the others with success."""

    def __init__(self) -> None:
        self.sent = 0

    def send(self, frame: bytes) -> asyncio.Future[bytes]:
        correlation_id = self.sent % 2  # _produce_frames numbers each partition's frame with the partition
        self.sent += 1
        error = ErrorCode.NOT_LEADER_OR_FOLLOWER if correlation_id == 0 else ErrorCode.NONE
        body = ProduceResponse(
            responses=[
                TopicProduceResponse(
                    name="t", partition_responses=[PartitionProduceResponse(index=correlation_id, error_code=error)]
                )
            ]
        )
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        answer.set_result(api.encode_response(ApiKey.PRODUCE, bench_broker.PRODUCE_VERSION, correlation_id, body)[4:])
        return answer


def test_a_produce_error_ends_the_producer_with_that_error_instead_of_a_hang() -> None:
    # before: acknowledge() raised, nothing emptied the in-flight queue, and the producer waited on it for ever
    frames = [(0, b"partition 0"), (1, b"partition 1")]

    async def produce() -> None:
        await asyncio.wait_for(bench_broker._produce(_AnsweringConnection(), frames, 50), 10)  # type: ignore[arg-type]

    with pytest.raises(RuntimeError, match="Produce to partition 0"):
        asyncio.run(produce())
