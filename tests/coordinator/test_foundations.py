"""The building blocks: timer (purgatory), Reply, config, hashing (#1), state table, ids."""

from __future__ import annotations

import pytest

from coordinator.clock import ManualClock
from coordinator.config import ConfigError, CoordinatorConfig
from coordinator.hashing import java_string_hash, kafka_abs, partition_for
from coordinator.ids import MemberIdGenerator
from coordinator.reply import Reply, ReplyAlreadyCompletedError
from coordinator.state import VALID_PREVIOUS, GroupState, IllegalStateTransitionError, check_transition
from coordinator.timer import Timer, TimerLoopError

# -- timer ---------------------------------------------------------------------------------------------------


def test_timer_fires_in_deadline_then_schedule_order() -> None:
    timer = Timer()
    fired: list[str] = []
    timer.schedule("b", 20, lambda: fired.append("b"))
    timer.schedule("a", 10, lambda: fired.append("a"))
    timer.schedule("c", 20, lambda: fired.append("c"))
    assert timer.next_deadline_ms() == 10
    assert timer.poll(9) == 0
    assert timer.poll(20) == 3
    assert fired == ["a", "b", "c"]
    assert timer.next_deadline_ms() is None


def test_timer_schedule_replaces_and_never_fires_the_replaced_op() -> None:
    timer = Timer()
    fired: list[str] = []
    timer.schedule("k", 10, lambda: fired.append("old"))
    timer.schedule("k", 30, lambda: fired.append("new"))  # postponed in place
    assert timer.deadline("k") == 30
    assert timer.poll(10) == 0
    assert timer.next_deadline_ms() == 30
    timer.schedule("k", 5, lambda: fired.append("earlier"))  # moved earlier: a new heap item
    assert timer.poll(29) == 1
    assert fired == ["earlier"]
    assert not timer.contains("k")


def test_timer_cancel_and_schedule_if_absent() -> None:
    timer = Timer()
    fired: list[str] = []
    assert timer.schedule_if_absent("k", 10, lambda: fired.append("first"))
    assert not timer.schedule_if_absent("k", 5, lambda: fired.append("second"))
    assert timer.cancel("k")
    assert not timer.cancel("k")
    assert timer.poll(100) == 0
    assert fired == []


def test_timer_runs_ops_scheduled_for_now_by_ops_and_bounds_the_loop() -> None:
    timer = Timer()
    fired: list[int] = []

    def chain(n: int) -> None:
        fired.append(n)
        if n < 3:
            timer.schedule(("chain", n + 1), 10, lambda: chain(n + 1))

    timer.schedule(("chain", 0), 10, lambda: chain(0))
    assert timer.poll(10) == 4
    assert fired == [0, 1, 2, 3]

    looping = Timer(max_ops_per_poll=100)

    def forever() -> None:
        looping.schedule("again", 0, forever)

    looping.schedule("again", 0, forever)
    with pytest.raises(TimerLoopError):
        looping.poll(0)


def test_timer_heap_stays_bounded_under_many_reschedules_and_cancels() -> None:
    timer = Timer()
    for round_ in range(50):
        for key in range(100):
            timer.schedule(key, 1000 - round_ - key, lambda: None)  # always earlier: orphans heap items
    assert len(timer) == 100
    assert len(timer._heap) <= 100 + 1100  # compacted
    for key in range(100):
        timer.cancel(key)
    assert timer.next_deadline_ms() is None


def test_manual_clock_moves_only_forward() -> None:
    clock = ManualClock(100, wall_start_ms=5_000)
    assert (clock.monotonic_ms(), clock.wall_ms()) == (100, 5_000)
    clock.advance(50)
    assert (clock.monotonic_ms(), clock.wall_ms()) == (150, 5_050)
    with pytest.raises(ValueError, match="backwards"):
        clock.advance(-1)


# -- reply ---------------------------------------------------------------------------------------------------


def test_reply_is_a_one_shot_handle_with_callbacks() -> None:
    reply: Reply[int] = Reply()
    seen: list[int] = []
    reply.on_complete(seen.append)
    assert not reply.done
    with pytest.raises(LookupError):
        _ = reply.value
    reply.complete(7)
    assert reply.done and reply.value == 7 and seen == [7]
    reply.on_complete(seen.append)  # late subscribers get the value at once
    assert seen == [7, 7]
    with pytest.raises(ReplyAlreadyCompletedError):
        reply.complete(8)
    assert Reply.completed("x").value == "x"


# -- config --------------------------------------------------------------------------------------------------


def test_config_defaults_are_kafkas() -> None:
    config = CoordinatorConfig()
    assert config.group_min_session_timeout_ms == 6_000
    assert config.group_max_session_timeout_ms == 1_800_000
    assert config.group_initial_rebalance_delay_ms == 3_000
    assert config.group_max_size == 2_147_483_647
    assert config.offsets_topic_num_partitions == 50
    assert config.offsets_retention_ms == 10_080 * 60_000
    assert config.offsets_retention_check_interval_ms == 600_000
    assert config.offset_metadata_max_bytes == 4_096
    assert config.offsets_commit_timeout_ms == 5_000
    assert config.new_member_join_timeout_ms == 300_000


def test_config_from_kafka_props_maps_names_units_and_overrides() -> None:
    config = CoordinatorConfig.from_kafka_props(
        {
            "group.initial.rebalance.delay.ms": "0",
            "offsets.retention.minutes": "2",
            "group.max.size": " 10 ",
            "offsets.topic.num.partitions": "3",
            "log.dirs": "/tmp/whatever",  # not ours: ignored
        },
        member_id_seed=42,
    )
    assert config.group_initial_rebalance_delay_ms == 0
    assert config.offsets_retention_ms == 120_000
    assert config.group_max_size == 10
    assert config.offsets_topic_num_partitions == 3
    assert config.member_id_seed == 42
    with pytest.raises(ConfigError, match="integer"):
        CoordinatorConfig.from_kafka_props({"group.max.size": "lots"})
    with pytest.raises(ConfigError, match="must not exceed"):
        CoordinatorConfig.from_kafka_props({"group.min.session.timeout.ms": "10", "group.max.session.timeout.ms": "5"})
    with pytest.raises(ConfigError, match="unknown"):
        CoordinatorConfig.from_kafka_props({}, no_such_setting=1)
    with pytest.raises(ConfigError, match="positive"):
        CoordinatorConfig(offsets_topic_num_partitions=0)


# -- rule #1: hashing ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group_id", "java_hash", "partition"),
    [
        ("polygenelubricants", -(2**31), 0),  # naive abs(h) % 50 would give 48
        ("GydZG_", -(2**31), 0),
        ("\U0001f600", 1772899, 49),  # hashed over its UTF-16 surrogate pair; the code point would give 12
        ("", 0, 0),
    ],
)
def test_rule_01_group_partition_is_kafka_abs_of_java_hash_mod_partitions(
    group_id: str, java_hash: int, partition: int
) -> None:
    assert java_string_hash(group_id) == java_hash
    assert partition_for(group_id, 50) == partition


def test_rule_01_java_hash_overflows_like_int32_and_abs_of_min_is_zero() -> None:
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("a-much-longer-group-id-that-overflows") == _reference_hash(
        "a-much-longer-group-id-that-overflows"
    )
    assert java_string_hash("grüße") == _reference_hash("grüße")
    assert kafka_abs(-(2**31)) == 0
    assert kafka_abs(-5) == 5
    with pytest.raises(ValueError):
        partition_for("g", 0)


def test_rule_01_a_remembered_partition_is_the_one_computed() -> None:
    """`partition_for` remembers recent ids (every group request asks): the same answers, whatever the order."""
    ids = [f"group-{i}" for i in range(300)] + ["polygenelubricants", "\U0001f600", "grüße"]
    expected = [kafka_abs(_reference_hash(g)) % 50 for g in ids]
    assert [partition_for(g, 50) for g in ids] == expected
    assert [partition_for(g, 50) for g in reversed(ids)] == expected[::-1]
    assert partition_for("group-1", 7) == kafka_abs(_reference_hash("group-1")) % 7


def _reference_hash(value: str) -> int:
    data = value.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) % 2**32
    return h - 2**32 if h >= 2**31 else h


# -- state table ---------------------------------------------------------------------------------------------


def test_state_transition_table_is_kafkas() -> None:
    legal = {(prev, target) for target, prevs in VALID_PREVIOUS.items() for prev in prevs}
    assert (GroupState.EMPTY, GroupState.PREPARING_REBALANCE) in legal
    assert (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE) in legal
    assert (GroupState.COMPLETING_REBALANCE, GroupState.STABLE) in legal
    assert (GroupState.STABLE, GroupState.PREPARING_REBALANCE) in legal
    assert (GroupState.PREPARING_REBALANCE, GroupState.EMPTY) in legal
    for state in GroupState:
        assert (state, GroupState.DEAD) in legal
        assert state.__doc__ and "action:" in state.__doc__ and "transition:" in state.__doc__
    check_transition("g", GroupState.STABLE, GroupState.PREPARING_REBALANCE)
    for illegal in [
        (GroupState.EMPTY, GroupState.STABLE),
        (GroupState.STABLE, GroupState.COMPLETING_REBALANCE),
        (GroupState.DEAD, GroupState.EMPTY),
        (GroupState.EMPTY, GroupState.COMPLETING_REBALANCE),
    ]:
        assert illegal not in legal
        with pytest.raises(IllegalStateTransitionError):
            check_transition("g", *illegal)
    assert [s.value for s in GroupState] == [
        "Empty",
        "PreparingRebalance",
        "CompletingRebalance",
        "Stable",
        "Dead",
    ]


def test_member_ids_are_prefixed_uuids_and_reproducible_with_a_seed() -> None:
    a, b = MemberIdGenerator(7), MemberIdGenerator(7)
    first = a.new_id("client")
    assert first == b.new_id("client")
    assert first.startswith("client-") and len(first) == len("client-") + 36
    assert a.new_id("client") != first
    assert MemberIdGenerator().new_id("x") != MemberIdGenerator().new_id("x")
