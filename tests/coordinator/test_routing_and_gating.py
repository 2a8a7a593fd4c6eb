"""Coordinator routing and request gating: rules #2, #3, #4 (and #1's use in FindCoordinator)."""

from __future__ import annotations

from coordinator.hashing import partition_for
from coordinator.routing import GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE, CoordinatorTopic, Node, find_coordinator
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.offset_fetch import OffsetFetchRequest
from tests.coordinator.harness import CoordinatorTestContext

NONE = ErrorCode.NONE


def _group_in(ctx: CoordinatorTestContext, partition: int, *, owned: bool = True) -> str:
    for i in range(10_000):
        group_id = f"group-{i}"
        if (ctx.coordinator.partition_for(group_id) == partition) == owned:
            return group_id
    raise AssertionError("no such group id")


# -- #2 ------------------------------------------------------------------------------------------------------


def test_rule_02_empty_group_id_is_invalid_except_for_commit_fetch_describe_delete() -> None:
    ctx = CoordinatorTestContext()
    assert ctx.join(group_id="").value.error_code == ErrorCode.INVALID_GROUP_ID
    assert ctx.sync(group_id="", member_id="m", generation_id=1).value.error_code == ErrorCode.INVALID_GROUP_ID
    assert ctx.heartbeat("", "m", 1) is ErrorCode.INVALID_GROUP_ID
    assert ctx.leave("", ("m", None)).error_code == ErrorCode.INVALID_GROUP_ID
    assert ctx.offset_delete("", {"t": [0]}).value.error_code == ErrorCode.INVALID_GROUP_ID
    assert (
        set(ctx.commit_errors(ctx.commit(group_id="")))
        and ctx.commit(group_id="").value.topics[0].partitions[0].error_code == NONE
    )
    assert ctx.fetch("", {"t": [0]}).error_code == NONE
    assert ctx.describe("")[0].error_code == NONE
    assert ctx.delete_groups("").value.results[0].error_code == NONE  # the "" group exists now (from the commit)
    null = ctx.coordinator.offset_fetch(ctx.ctx(7), OffsetFetchRequest(group_id=None), ctx.now_ms)  # type: ignore[arg-type]
    assert null.error_code == ErrorCode.INVALID_GROUP_ID


def test_rule_02_gating_order_inactive_loading_not_owner() -> None:
    ctx = CoordinatorTestContext(partitions=[0])
    mine, theirs = _group_in(ctx, 0), _group_in(ctx, 0, owned=False)
    assert ctx.join_dynamic(theirs).value.error_code == ErrorCode.NOT_COORDINATOR
    assert ctx.describe(theirs)[0].error_code == ErrorCode.NOT_COORDINATOR
    assert ctx.join_dynamic(mine).value.error_code == NONE
    loading_partition = ctx.coordinator.partition_for(theirs)
    ctx.coordinator.begin_loading(loading_partition)
    assert ctx.join_dynamic(theirs).value.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    ctx.coordinator.shutdown(ctx.now_ms)
    assert ctx.join_dynamic(mine).value.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert ctx.join(group_id="").value.error_code == ErrorCode.INVALID_GROUP_ID  # the id is checked first


def _groups(leaders: dict[int, Node]) -> dict[int, CoordinatorTopic]:
    """Only the group coordinator: __consumer_offsets with 50 partitions led as `leaders` says."""
    return {GROUP_KEY_TYPE: CoordinatorTopic(50, True, leaders.get)}


# -- #3 ------------------------------------------------------------------------------------------------------


def test_rule_03_find_coordinator_before_the_offsets_topic_exists_is_not_available_and_creates_it() -> None:
    created: list[bool] = []
    topic = CoordinatorTopic(50, False, lambda p: Node(1, "h", 9092), lambda: created.append(True))
    response = find_coordinator(FindCoordinatorRequest(key="g"), 3, {GROUP_KEY_TYPE: topic})
    assert response.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert (response.node_id, response.host, response.port) == (-1, "", -1)
    assert created == [True]


def test_rule_03_find_coordinator_v4_answers_per_key_and_routes_by_partition() -> None:
    leaders = {0: Node(1, "a", 9092), 49: Node(2, "b", 9093)}
    request = FindCoordinatorRequest(coordinator_keys=["polygenelubricants", "\U0001f600", "x"])
    response = find_coordinator(request, 4, _groups(leaders))
    answers = [(c.key, c.node_id, c.host, c.error_code) for c in response.coordinators]
    assert answers == [
        ("polygenelubricants", 1, "a", NONE),
        ("\U0001f600", 2, "b", NONE),
        ("x", -1, "", ErrorCode.COORDINATOR_NOT_AVAILABLE),  # partition without a leader
    ]
    v0 = find_coordinator(FindCoordinatorRequest(key="GydZG_"), 0, _groups(leaders))
    assert (v0.error_code, v0.node_id, v0.host, v0.port) == (NONE, 1, "a", 9092)
    txn = find_coordinator(FindCoordinatorRequest(key="t", key_type=1), 3, _groups(leaders))
    assert txn.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE  # no transaction coordinator in this view


def test_t1_a_transactional_id_is_routed_to_its_transaction_state_partition() -> None:
    """T1: `abs(hashCode) % transaction.state.log.num.partitions`, as groups are routed on __consumer_offsets;
    each key type is answered from its own topic."""
    group_leaders = {0: Node(1, "a", 9092)}
    txn_leaders = {partition_for("polygenelubricants", 7): Node(2, "b", 9093)}
    topics = {
        GROUP_KEY_TYPE: CoordinatorTopic(50, True, group_leaders.get),
        TRANSACTION_KEY_TYPE: CoordinatorTopic(7, True, txn_leaders.get),
    }
    txn = find_coordinator(FindCoordinatorRequest(key="polygenelubricants", key_type=1), 3, topics)
    assert (txn.error_code, txn.node_id, txn.port) == (NONE, 2, 9093)
    request = FindCoordinatorRequest(key_type=1, coordinator_keys=["polygenelubricants", "other"])
    batched = find_coordinator(request, 4, topics)
    assert [(c.key, c.node_id) for c in batched.coordinators] == [("polygenelubricants", 2), ("other", -1)]


def test_rule_03_find_coordinator_error_message_is_kafkas_per_version() -> None:
    """Kafka's v0-3 answer carries `Errors.message()` ("NONE" on success, the exception's text on an error); its
    v4+ per-key entries never set the message, so it is the schema default "" (found by the differential suite)."""
    leaders = {0: Node(1, "a", 9092)}
    for version in (1, 3):
        old = find_coordinator(FindCoordinatorRequest(key="GydZG_"), version, _groups(leaders))
        assert old.error_message == "NONE"
    missing = find_coordinator(FindCoordinatorRequest(key="x"), 3, _groups(leaders))
    assert missing.error_message == "The coordinator is not available."
    request = FindCoordinatorRequest(coordinator_keys=["GydZG_", "x"])
    new = find_coordinator(request, 4, _groups(leaders))
    assert [(c.error_code, c.error_message) for c in new.coordinators] == [
        (NONE, ""),
        (ErrorCode.COORDINATOR_NOT_AVAILABLE, ""),
    ]


# -- #4 ------------------------------------------------------------------------------------------------------


def test_rule_04_while_loading_heartbeat_answers_none_sync_rebalance_others_14() -> None:
    ctx = CoordinatorTestContext(partitions=[])
    group_id = "g"
    ctx.coordinator.begin_loading(ctx.coordinator.partition_for(group_id))
    assert ctx.heartbeat(group_id, "m", 1) is NONE
    assert ctx.sync(group_id=group_id, member_id="m", generation_id=1).value.error_code == (
        ErrorCode.REBALANCE_IN_PROGRESS
    )
    loading = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert ctx.join_dynamic(group_id).value.error_code == loading
    assert set(ctx.commit_errors(ctx.commit(group_id=group_id)).values()) == {loading}
    assert ctx.fetch(group_id, {"t": [0]}).error_code == loading
    assert ctx.leave(group_id, ("m", None)).error_code == loading
    assert ctx.describe(group_id)[0].error_code == loading
    assert ctx.delete_groups(group_id).value.results[0].error_code == loading
    assert ctx.offset_delete(group_id, {"t": [0]}).value.error_code == loading


# -- several nodes in one process (issue #19) ----------------------------------------------------------------


def test_a_node_that_does_not_lead_the_groups_partition_is_not_its_coordinator() -> None:
    # One coordinator holds every node's partitions; `serves` says whether the asking node leads the partition.
    asking_node_leads: set[int] = set()
    ctx = CoordinatorTestContext(serves=lambda partition: partition in asking_node_leads)
    here, elsewhere = _group_in(ctx, 0), _group_in(ctx, 1)
    asking_node_leads.add(0)
    assert ctx.join_dynamic(here).value.error_code == NONE
    assert ctx.join_dynamic(elsewhere).value.error_code == ErrorCode.NOT_COORDINATOR
    assert ctx.heartbeat(elsewhere, "m", 1) is ErrorCode.NOT_COORDINATOR
    assert set(ctx.commit_errors(ctx.commit(group_id=elsewhere)).values()) == {ErrorCode.NOT_COORDINATOR}
    assert ctx.fetch(elsewhere, {"t": [0]}).error_code == ErrorCode.NOT_COORDINATOR
    assert [g.error_code for g in ctx.describe(here, elsewhere)] == [NONE, ErrorCode.NOT_COORDINATOR]
    # ListGroups on a node lists the groups of the partitions it leads, and only those loading there count.
    assert [g.group_id for g in ctx.list_groups().groups] == [here]
    ctx.coordinator.unload_partition(1, ctx.now_ms)
    ctx.coordinator.begin_loading(1)
    assert ctx.list_groups().error_code == NONE
    asking_node_leads.add(1)
    assert ctx.list_groups().error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    # A node that is not the leader says NOT_COORDINATOR before looking at loading, as Kafka's would.
    asking_node_leads.discard(1)
    assert ctx.join_dynamic(elsewhere).value.error_code == ErrorCode.NOT_COORDINATOR


def test_a_coordinator_moving_to_another_node_loads_the_group_there_and_the_old_node_refuses_it() -> None:
    # Parked requests answered NOT_COORDINATOR on unload: rule #47's tests (test_persistence.py).
    leader = {0: "a"}
    asking = ["a"]
    ctx = CoordinatorTestContext(serves=lambda partition: leader.get(partition) == asking[0], partitions=[0])
    group_id = _group_in(ctx, 0)
    joined = ctx.join_with_n_members(group_id, 1)
    member, generation = joined.leader_id, joined.generation_id
    assert ctx.heartbeat(group_id, member, generation) is NONE
    # Node "a" stops: its partition is unloaded there, and node "b", the new leader, loads it from the log.
    ctx.coordinator.unload_partition(0, ctx.now_ms)
    leader[0] = "b"
    ctx.coordinator.begin_loading(0)
    asking[0] = "b"
    assert ctx.fetch(group_id, {"t": [0]}).error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS  # #4: not Heartbeat
    ctx.coordinator.load_partition(0, ctx.store.records(0), ctx.now_ms, ctx.clock.wall_ms())
    assert ctx.heartbeat(group_id, member, generation) is NONE
    assert ctx.state(group_id) is GroupState.STABLE
    asking[0] = "a"
    assert ctx.heartbeat(group_id, member, generation) is ErrorCode.NOT_COORDINATOR
