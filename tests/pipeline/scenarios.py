"""Known-answer logs: every scenario is a group (and its own topic) in one synthetic log directory.

The builder writes the log with :class:`pipeline.synth.SyntheticLog` and returns what the pipeline must find,
worked out here by hand from the scenario, never from the pipeline. Times are in seconds in the code and ms in
the log. The analysis that checks them runs with ``TEST_CONFIG``: a 50 s tick (so every "now" below is a tick),
15 intervals (vectors 9 and 10 have 15 commits), a 1 s broker-offset ring spacing and expire-group 1500 s.

Burrow's vectors become logs by producing just enough before each commit that LEO(commit time) = offset + lag
(kept monotone where a vector's numbers would need LEO to shrink, which changes no status), and by shaping the
LEO before "now" so the 15-entry ring agrees with the vector's broker offsets. Vectors 9 and 10 are moved back
in time by a constant (1512224000 s), which preserves every difference the rules look at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.config import AnalysisConfig, BurrowConfig
from pipeline.synth import Member, SyntheticLog
from tests.pipeline.vectors import LOG_VECTORS

TEST_CONFIG = AnalysisConfig(
    burrow=BurrowConfig(intervals=15, offset_refresh_s=1, expire_group_s=1500),
    tick_ms=50_000,
    rate_window_ms=100_000,
)
SHIFT_MS = 1512224000 * 1000
#: Writes a group's generation: ``(group, generation, members, ts_ms)`` (default :meth:`SyntheticLog.generation`).
GenerationWriter = Callable[[str, int, Sequence[Member], int], object]
S = 1000  # ms per second


@dataclass(frozen=True)
class Check:
    """At ``tick_ms`` the partition (group, topic, 0) must have ``status``, decided by ``rule``."""

    group: str
    tick_ms: int
    status: str
    rule: str | None = None
    allowed_lag: int = 0  # checked in the run with this allowed-lag
    partition: int = 0


@dataclass
class Expected:
    checks: list[Check] = field(default_factory=list)
    group_checks: list[tuple[str, int, str]] = field(default_factory=list)  # (group, tick_ms, group status)
    rebalances: list[dict[str, object]] = field(default_factory=list)
    describe_at_250s: list[dict[str, object]] = field(default_factory=list)
    min_distance_window: list[tuple[int, int]] = field(default_factory=list)  # (offset, ts) at 200 s
    compacted_partition: int = -1  # the __consumer_offsets partition with 5 offsets missing


def _vectors(log: SyntheticLog, exp: Expected) -> None:
    for v in LOG_VECTORS:
        group, topic = f"vector{v.index}", f"vt{v.index}"
        shift = SHIFT_MS if v.index in (9, 10) else 0
        first = v.window[0].offset
        log.create_topic(topic, 1, start_offsets={0: first} if first > 10_000 else None)
        leo = log.leo(topic, 0)
        for e in v.window:
            leo = max(leo, e.offset + (e.lag or 0))
            log.produce_to(topic, 0, leo, e.timestamp - shift)
            log.commit(group, topic, 0, e.offset, e.timestamp - shift)
        now = v.now_s * S - shift
        if v.index == 9:  # ring [792748500 .. 792749024], all above the last commit 792748093
            for at_s, to in ((633, 792748500), (640, 792748600), (645, 792748800), (648, 792749000), (649, 792749024)):
                log.produce_to(topic, 0, to, at_s * S)
        elif v.index == 10:  # one record 3 s before now: the ring still holds 792748093
            log.produce_to(topic, 0, 792748094, 647 * S)
        else:
            log.produce_to(topic, 0, max(leo, v.window[-1].offset + v.current_lag), v.window[-1].timestamp + 1)
        allowed = v.allowed_lag
        exp.checks.append(Check(group, now, v.expected.name, allowed_lag=allowed))


def _linear(log: SyntheticLog, group: str, commits: list[tuple[int, int, int]]) -> None:
    """(t seconds, LEO to reach, committed offset) in order, on the group's own topic."""
    topic = f"t-{group}"
    if not log.has_topic(topic):
        log.create_topic(topic, 1)
    for t, leo, offset in commits:
        log.produce_to(topic, 0, leo, t * S)
        log.commit(group, topic, 0, offset, t * S)


def _statuses(log: SyntheticLog, exp: Expected) -> None:
    _linear(log, "s-ok", [(t, 10 * t, 10 * t) for t in range(100, 501, 50)])
    exp.checks.append(Check("s-ok", 500 * S, "OK", "current-lag"))

    _linear(log, "s-warn", [(100 * k, 200 * k, 100 * k) for k in range(1, 9)])
    exp.checks.append(Check("s-warn", 800 * S, "WARN", "warn"))

    _linear(log, "s-stall", [(t, 600 + 2 * t, 500) for t in range(100, 501, 50)])
    exp.checks.append(Check("s-stall", 500 * S, "STALL", "stall"))

    _linear(log, "s-stop", [(t, 10 * t + 50, 10 * t) for t in range(100, 301, 50)])
    for t in range(350, 1001, 50):
        log.produce_to("t-s-stop", 0, 10 * t + 50, t * S)
    exp.checks.append(Check("s-stop", 300 * S, "WARN", "warn"))
    exp.checks.append(Check("s-stop", 700 * S, "STOP", "stop"))

    _linear(
        log, "s-rewind", [(100, 1100, 1000), (150, 2100, 2000), (200, 3100, 3000), (250, 3100, 500), (300, 3100, 800)]
    )
    exp.checks.append(Check("s-rewind", 300 * S, "REWIND", "rewind"))

    _linear(
        log,
        "s-rewind-ok",
        [
            (100, 1100, 1000),
            (150, 2100, 2000),
            (200, 3100, 3000),
            (250, 3100, 500),
            (300, 3300, 3200),
            (350, 3600, 3500),
        ],
    )
    exp.checks.append(Check("s-rewind-ok", 350 * S, "OK", "ok"))

    _linear(log, "s-idle", [(t, 100, 100) for t in range(100, 301, 50)])
    log.produce_to("t-s-idle", 0, 101, 990 * S)
    exp.checks.append(Check("s-idle", 1000 * S, "OK", "zero-lag"))  # the ring still shows LEO 100 at 986-989 s
    exp.checks.append(Check("s-idle", 1050 * S, "STOP", "stop"))  # ... and no longer 50 s later

    log.create_topic("t-s-txn", 1)
    for t in range(100, 501, 50):  # 10 records and a transaction marker; the consumer stops before the marker
        log.produce("t-s-txn", 0, 10, t * S)
        log.produce("t-s-txn", 0, 1, t * S, control=True)
        log.commit("s-txn", "t-s-txn", 0, log.leo("t-s-txn", 0) - 1, t * S)
    exp.checks.append(Check("s-txn", 500 * S, "WARN", "warn"))
    exp.checks.append(Check("s-txn", 500 * S, "OK", "current-lag", allowed_lag=1))

    _linear(log, "s-expire", [(100, 10, 10), (150, 20, 20), (200, 30, 30)])
    log.compact_away("s-expire", 5)  # a hole in its __consumer_offsets partition: history the cleaner removed
    exp.compacted_partition = log.offsets_partition("s-expire")
    _linear(log, "s-expire", [(1900, 40, 40)])
    exp.group_checks += [
        ("s-expire", 1650 * S, "OK"),
        ("s-expire", 1750 * S, "NOTFOUND"),
        ("s-expire", 1850 * S, "NOTFOUND"),
        ("s-expire", 1900 * S, "OK"),
    ]

    _linear(log, "s-mindist", [(t, 10 * (t // 20 - 4), 10 * (t // 20 - 4)) for t in range(100, 201, 20)])
    exp.min_distance_window = [(30, 100 * S), (60, 160 * S)]


def rebalance_scenario(log: SyntheticLog, exp: Expected, generation: GenerationWriter | None = None) -> None:
    """Four generations with commits between them. ``generation`` writes each one (a KIP-848 group epoch instead
    of a classic GroupMetadata record: the expected answers are the same)."""
    g, topic = "s-rebalance", "rbt"
    write = generation if generation is not None else log.generation
    log.create_topic(topic, 2)
    a = Member("a-1", client_id="ca", client_host="/10.0.0.1")
    b = Member("b-1", client_id="cb", client_host="/10.0.0.2")

    def commit_round(t: int) -> None:
        for p in (0, 1):
            log.produce(topic, p, 5, t * S)
        log.commit_many(g, [(topic, 0, log.leo(topic, 0) - 2), (topic, 1, log.leo(topic, 1) - 3)], t * S)

    write(g, 1, [Member(a.member_id, "ca", "/10.0.0.1", {topic: [0, 1]})], 100 * S)
    for t in range(110, 191, 10):
        commit_round(t)
    write(
        g,
        2,
        [Member(a.member_id, "ca", "/10.0.0.1", {topic: [0]}), Member(b.member_id, "cb", "/10.0.0.2", {topic: [1]})],
        200 * S,
    )
    for t in range(230, 291, 10):
        commit_round(t)
    write(g, 3, [Member(b.member_id, "cb", "/10.0.0.2", {topic: [0, 1]})], 300 * S)
    for t in range(320, 391, 10):
        commit_round(t)
    write(g, 4, [], 400 * S)
    # 9 rounds before 200 s and 3 (230, 240, 250) up to 250 s: LEO = 5 * 12 = 60 per partition at 250 s.
    exp.describe_at_250s = [
        {
            "group": g,
            "topic": topic,
            "partition": 0,
            "current_offset": 58,
            "log_end_offset": 60,
            "lag": 2,
            "consumer_id": "a-1",
            "host": "/10.0.0.1",
            "client_id": "ca",
        },
        {
            "group": g,
            "topic": topic,
            "partition": 1,
            "current_offset": 57,
            "log_end_offset": 60,
            "lag": 3,
            "consumer_id": "b-1",
            "host": "/10.0.0.2",
            "client_id": "cb",
        },
    ]
    exp.rebalances = [
        {
            "generation": 1,
            "joined": ["a-1"],
            "left": [],
            "member_count": 1,
            "prev_generation_lifetime_ms": None,
            "lifetime_ms": 100 * S,
            "commit_pause_ms": None,
            "became_empty": False,
        },
        {
            "generation": 2,
            "joined": ["b-1"],
            "left": [],
            "member_count": 2,
            "prev_generation_lifetime_ms": 100 * S,
            "lifetime_ms": 100 * S,
            "commit_pause_ms": 40 * S,
            "became_empty": False,
        },
        {
            "generation": 3,
            "joined": [],
            "left": ["a-1"],
            "member_count": 1,
            "prev_generation_lifetime_ms": 100 * S,
            "lifetime_ms": 100 * S,
            "commit_pause_ms": 30 * S,
            "became_empty": False,
        },
        {
            "generation": 4,
            "joined": [],
            "left": ["b-1"],
            "member_count": 0,
            "prev_generation_lifetime_ms": 100 * S,
            "lifetime_ms": 1500 * S,
            "commit_pause_ms": None,
            "became_empty": True,
        },  # current: until as-of 1900 s
    ]


def build(data_dir: Path) -> Expected:
    exp = Expected()
    with SyntheticLog(data_dir, offsets_partitions=8) as log:
        _vectors(log, exp)
        _statuses(log, exp)
        rebalance_scenario(log, exp)
    return exp
