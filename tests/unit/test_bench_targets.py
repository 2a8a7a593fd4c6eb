"""The plumbing of issue #18's targets table (bench/bench_targets.py, bench/heartbeat_load.py), without timing anything.

What the table must get right whatever the figures: which peers it shows, how big a run is, whether a target is met
(higher or lower is better, against a bound or the mock), how members and partitions are dealt over connections,
that the load generator's plan survives its trip to the child process, that a pipelined pump keeps `depth`
requests in flight and ends only once every one is answered, and that profiling runs our broker under cProfile.
"""

from __future__ import annotations

import asyncio
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from bench import bench_targets
from bench.bench_broker import split_partitions
from bench.bench_targets import FULL, QUICK, Context, Row, Target, columns, scale, table
from bench.heartbeat_load import HeartbeatPlan, Member, spread
from bench.peers import Peer
from bench.wire_load import Connection, ServerProcess


def test_bench_quick_picks_the_ci_sized_run() -> None:
    assert scale({}) is FULL
    assert scale({"BENCH_QUICK": "0"}) is FULL
    assert scale({"BENCH_QUICK": "1"}) is QUICK
    assert QUICK.idle_connections < FULL.idle_connections and QUICK.many_members < FULL.many_members
    assert set(QUICK.formation_sizes) <= set(QUICK.formation_runs)
    assert set(FULL.formation_sizes) == {1, 10, 100, 1000} <= set(FULL.formation_runs)


def test_the_columns_are_ours_the_floor_and_the_mock_unless_more_peers_are_asked_for() -> None:
    assert [p.name for p in columns({})] == ["ours", "floor", "mock"]
    assert [p.name for p in columns({"BENCH_TARGETS_PEERS": "kfake, mock"})] == ["ours", "mock", "kfake"]
    assert [p.name for p in columns({"BENCH_TARGETS_PEERS": "mock"})] == ["ours", "mock"]  # ours is always there


@pytest.mark.parametrize(
    ("target", "ours", "mock", "verdict"),
    [
        (Target(">= mock", True, vs_mock=True), 2.0, 1.0, "met"),
        (Target(">= mock", True, vs_mock=True), 1.0, 2.0, "missed"),
        (Target("<= mock", False, vs_mock=True), 1.0, 2.0, "met"),
        (Target("<= mock", False, vs_mock=True), 3.0, 2.0, "missed"),
        (Target("<= mock", False, vs_mock=True), 1.0, "n/a (failed)", "not measured"),
        (Target(">= 100", True, bound=100.0), 100.0, None, "met"),
        (Target(">= 100", True, bound=100.0), 99.0, 1e9, "missed"),
        (Target("<= 10", False, bound=10.0), 7.5, None, "met"),
        (Target("<= 10", False, bound=10.0), "n/a (failed)", 1.0, "not measured"),
        (Target("> one", True, bound=None), 5.0, None, "met"),  # no bound known: nothing to miss
        (Target(">= mock and > one", True, bound=4.0, vs_mock=True), 5.0, 9.0, "missed"),  # the 16 x 4 rows
        (Target(">= mock and > one", True, bound=4.0, vs_mock=True), 3.0, 1.0, "missed"),
        (Target(">= mock and > one", True, bound=4.0, vs_mock=True), 5.0, 4.5, "met"),
    ],
)
def test_a_target_is_met_missed_or_not_measured(target: Target, ours: Any, mock: Any, verdict: str) -> None:
    assert target.verdict(ours, mock) == f"{target.text} ({verdict})"


def _peer(name: str) -> Peer:
    return Peer(name, "-", lambda _: pytest.fail("no broker is started here"))


def test_the_table_prints_each_row_with_its_ratio_and_verdict() -> None:
    rows = [
        Row("startup (ms)", {"ours": 50.0, "mock": 100.0}, Target("<= mock", False, vs_mock=True)),
        Row("heartbeats/s", {"ours": 10.0, "mock": "n/a (failed)"}, Target(">= 100,000/s", True, bound=1e5)),
    ]
    header, body = table(rows, [_peer("ours"), _peer("mock")])
    assert header == ("measure", "ours", "mock", "ours/mock", "issue target")
    assert body[0] == ("startup (ms)", "50", "100", "0.50", "<= mock (met)")
    assert body[1] == ("heartbeats/s", "10", "n/a (failed)", "n/a", ">= 100,000/s (missed)")


def test_members_and_partitions_are_dealt_round_robin_over_connections() -> None:
    members = [Member(f"g{i}", 1, f"m{i}") for i in range(25)]
    dealt = spread(members, 10)
    assert len(dealt) == 10 and [m.member_id for m in dealt[3]] == ["m3", "m13", "m23"]
    assert sorted(m.member_id for conn in dealt for m in conn) == sorted(m.member_id for m in members)
    assert len(spread(members[:3], 10)) == 3  # never an empty connection
    assert split_partitions(16, 4) == [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
    assert split_partitions(6, 1) == [[0, 1, 2, 3, 4, 5]]
    assert split_partitions(2, 4) == [[0], [1]]


def test_the_heartbeat_plan_survives_its_trip_to_the_load_generator() -> None:
    plan = HeartbeatPlan("127.0.0.1", 9092, [[Member("g", 3, "m-1")], [Member("h", 1, "m-2")]], 16, 3.0, 2, 42)
    assert HeartbeatPlan.from_json(plan.to_json()) == plan


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def get_extra_info(self, name: str) -> None:
        return None


def _answer() -> bytes:
    payload = struct.pack(">ih", 1, 0)
    return struct.pack(">i", len(payload)) + payload


def test_a_pipelined_pump_keeps_depth_in_flight_and_ends_once_all_are_answered() -> None:
    async def scenario() -> None:
        conn = Connection()
        transport = _Transport()
        conn.connection_made(transport)  # type: ignore[arg-type]
        pump = conn.pump([b"a", b"b"], lambda payload: True, time.perf_counter() + 60, depth=3)
        assert transport.writes == [b"aba"]  # the first `depth` requests in one write
        conn.data_received(_answer())
        assert transport.writes[-1] == b"b" and pump.sent == 4  # one answer, one more request
        pump.stop_at = 0.0  # the window is over: answers still arrive for the three in flight
        conn.data_received(_answer() * 2)
        assert not pump.done.done() and len(transport.writes) == 2
        conn.data_received(_answer())
        assert pump.done.result() == 4 and pump.failures == 0

    asyncio.run(scenario())


def test_profiling_runs_our_broker_under_cprofile_one_file_per_row(tmp_path: Path) -> None:
    ours = Peer("ours", "-", lambda data_dir: ServerProcess.ours(data_dir))
    mock = Peer("mock", "-", lambda _: ServerProcess.mock(0))
    ctx = Context([ours, mock], QUICK, tmp_path, profile_dir=tmp_path / "profiles")
    server = ctx.peer_for(ours, "startup").make(tmp_path / "data")
    assert isinstance(server, ServerProcess)
    assert server.argv[1:5] == ["-m", "cProfile", "-o", str(tmp_path / "profiles" / "startup.prof")]
    assert server.argv[5].endswith("server.py")
    assert ctx.peer_for(mock, "startup") is mock
    assert Context([ours], QUICK, tmp_path).peer_for(ours, "startup") is ours


def test_every_row_of_the_issue_has_a_measurement() -> None:
    names = {make.__name__ for make in bench_targets.ROWS}
    assert names == {"startup_row", "heartbeat_rows", "throughput_rows", "formation_rows", "commit_row", "memory_row"}


def test_a_profile_prints_as_top_tables_with_short_paths(tmp_path: Path) -> None:
    import cProfile

    from bench import profiles

    profiler = cProfile.Profile()
    profiler.runcall(split_partitions, 16, 4)
    profiler.dump_stats(tmp_path / "row.prof")
    shown = profiles.render(tmp_path / "row.prof", 5)
    assert shown.startswith("### row (")
    assert "by cumulative time:" in shown and "by self time:" in shown
    assert "`bench/bench_broker.py:" in shown  # repository paths are relative to the root
    assert profiles.short("~", 0, "<built-in method len>") == "<built-in method len>"


def test_bench_targets_rows_picks_rows_by_name() -> None:
    """The heartbeat and throughput makers name several rows each: the variable names the maker."""
    assert bench_targets.selected_rows({}) == list(bench_targets.ROWS)
    assert bench_targets.selected_rows({"BENCH_TARGETS_ROWS": "commit, startup"}) == [
        bench_targets.startup_row,
        bench_targets.commit_row,
    ]
    with pytest.raises(SystemExit, match="unknown nope"):
        bench_targets.selected_rows({"BENCH_TARGETS_ROWS": "nope"})


def test_a_peer_takes_part_only_in_the_rows_it_names(tmp_path: Path) -> None:
    ours = Peer("ours", "-", lambda data_dir: ServerProcess.ours(data_dir))
    floor = Peer("floor", "-", lambda _: ServerProcess.mock(0), rows=frozenset({"heartbeats-many"}))
    ctx = Context([ours, floor], QUICK, tmp_path)
    assert ctx.each("startup", lambda peer, _: peer.name)[0] == {"ours": "ours"}
    assert ctx.each("heartbeats-many", lambda peer, _: peer.name)[0] == {"ours": "ours", "floor": "floor"}
