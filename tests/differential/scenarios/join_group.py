"""JoinGroup rules #6-#18 of design/group-protocol.md (static membership included)."""

from __future__ import annotations

import dataclasses
import time

from protocol.registry import ApiKey
from tests.broker.group_wire import subscription
from tests.differential.registry import Known, scenario
from tests.differential.scenarios.common import (
    JOIN_V,
    SYNC_V,
    heartbeat,
    join,
    join_body,
    member_id_of,
    send_join,
    sync,
    sync_body,
)
from tests.differential.scenarios.group_flow import (
    NO_ANSWER,
    ORDER_WINDOW_MS,
    Member,
    collect_in_order,
    collect_join,
    error_within,
    group_state,
    heartbeating,
    join_in_order,
    leave,
    new_member,
    pair,
    send_in_order,
    send_member_join,
    stable_group,
    sync_all,
)
from tests.differential.session import Session


@scenario("#6")
async def session_timeout_out_of_bounds(s: Session) -> None:
    """Session timeouts below group.min / above group.max are INVALID_SESSION_TIMEOUT, the member id echoed."""
    conn = await s.connect()
    group = s.name("bounds")
    low = s.setting("group.min.session.timeout.ms") - 1
    high = s.setting("group.max.session.timeout.ms") + 1
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, session_ms=low), "below the minimum")
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, "someone", session_ms=high), "above the maximum")


@scenario("#8")
async def unknown_group_with_member_id(s: Session) -> None:
    """A non-empty member id for a group that does not exist is UNKNOWN_MEMBER_ID."""
    conn = await s.connect()
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(s.name("nogroup"), "ghost-member"), "join as ghost")


@scenario("#9")
async def member_id_required_then_join(s: Session) -> None:
    """v4+: an empty member id gets MEMBER_ID_REQUIRED with the id filled in; v3 is admitted at once."""
    conn = await s.connect()
    await join(s, conn, s.name("kip394"), "A", "v9 member")
    old = await conn.call(ApiKey.JOIN_GROUP, 3, join_body(s.name("kip394-v3")), "v3 member")
    s.alias("B", old.member_id)


@scenario("#12")
async def initial_delay_gathers_members(s: Session) -> None:
    """Two members joining a new group within the initial delay both land in generation 1 (KIP-134)."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group = s.name("delay")
    ida = await member_id_of(s, a, group, "A", "A gets an id")
    idb = await member_id_of(s, b, group, "B", "B gets an id")
    started = time.monotonic()
    pa = send_join(a, group, ida)
    await a.parked(pa, "A waits for the delay", 50)  # A is first (the leader), B joins within the delay
    pb = send_join(b, group, idb)
    await a.reply(pa, "A joined")
    await b.reply(pb, "B joined")
    waited = (time.monotonic() - started) * 1000
    s.note("answered after the initial delay", waited >= s.setting("group.initial.rebalance.delay.ms") * 0.9)


def _elapsed_ms(started: float) -> float:
    return (time.monotonic() - started) * 1000


@scenario("#7")
async def v0_rebalance_timeout_is_the_session_timeout(s: Session) -> None:
    """JoinGroup v0 carries no rebalance timeout; the broker takes the session timeout instead, so a rebalance waits
    that long for a v0 member that keeps heartbeating but does not rejoin, then drops it."""
    group = s.name("v0")
    a = Member("A", await s.connect("client-a"), join_kw={"session_ms": 1500})
    await collect_join(s, a, send_member_join(group, a, version=0), "A joins with v0")
    await sync_all(group, "orders", a, [a], "A")
    b = await new_member(s, group, "B", rebalance_ms=500)
    started = time.monotonic()
    async with heartbeating(group, a):
        pending = send_member_join(group, b)
        await b.conn.parked(pending, "B waits past its own rebalance timeout", 900)
        await collect_join(s, b, pending, "B joined")
    s.note("answered after A's session timeout", _elapsed_ms(started) >= 1200)
    await heartbeat(a.conn, group, 1, a.member_id, "A's heartbeat after the rebalance")


@scenario("#10")
async def protocol_compatibility(s: Session) -> None:
    """A new group needs a protocol type and at least one protocol; a joiner of an existing group needs the group's
    protocol type and one protocol every member supports; else INCONSISTENT_GROUP_PROTOCOL."""
    conn = await s.connect()
    group = s.name("compat")
    no_type = dataclasses.replace(join_body(group), protocol_type="")
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, no_type, "no protocol type, new group")
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, protocols=()), "no protocols, new group")
    a = await new_member(s, group, "A")
    await stable_group(s, group, [a])
    other_type = dataclasses.replace(join_body(group), protocol_type="connect")
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, other_type, "another protocol type, no member id")
    only_rr = join_body(group, protocols=(("roundrobin", subscription("orders")),))
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, only_rr, "a protocol no member supports, no member id")
    b = await new_member(s, group, "B")
    other_type = dataclasses.replace(join_body(group, b.member_id), protocol_type="connect")
    await b.conn.call(ApiKey.JOIN_GROUP, JOIN_V, other_type, "another protocol type, pending member")
    only_rr = join_body(group, b.member_id, protocols=(("roundrobin", subscription("orders")),))
    await b.conn.call(ApiKey.JOIN_GROUP, JOIN_V, only_rr, "a protocol no member supports, pending member")
    await group_state(s, conn, group, "the group is untouched")


@scenario("#11")
async def group_max_size(s: Session) -> None:
    """group.max.size (5 here): a sixth join while five are awaiting the join is GROUP_MAX_SIZE_REACHED with an empty
    member id; a full Stable group turns a newcomer away too."""
    group = s.name("maxsize")
    members = [await new_member(s, group, name) for name in "ABCDE"]
    extra = await new_member(s, group, "F")
    pending = await send_in_order(group, members, "five join")
    await members[-1].conn.parked(pending[-1], "five join: E waits", ORDER_WINDOW_MS)  # E is in before F
    await extra.conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, extra.member_id), "F joins as the sixth")
    await collect_in_order(s, members, pending, "five join")
    await sync_all(group, "orders", members[0], members, "five")
    late = await s.connect("client-g")
    first = await late.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group), "G asks for an id in a full Stable group")
    s.alias("G", first.member_id)
    await late.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, first.member_id), "G joins a full Stable group")
    await group_state(s, late, group, "still five")
    restarted = Member("E2", await s.connect("client-e2"), instance_id=f"{group}-E")
    await collect_join(s, restarted, send_member_join(group, restarted), "a sixth, static, in a full Stable group")


@scenario("#13")
async def join_completion_drops_absent_dynamic_members(s: Session) -> None:
    """A rebalance that the leader does not rejoin completes at the group's rebalance timeout without it: the
    absent dynamic member is removed and a member that did rejoin becomes the leader."""
    group = s.name("complete")
    a = await new_member(s, group, "A", rebalance_ms=1000)
    b = await new_member(s, group, "B", rebalance_ms=1000)
    await stable_group(s, group, [a, b])
    pending = send_member_join(group, b, topics=("orders", "payments"))
    await b.conn.parked(pending, "B rejoins with a new subscription and waits for A", 600)
    await collect_join(s, b, pending, "B joined without A")
    await heartbeat(a.conn, group, 1, a.member_id, "A's heartbeat after the rebalance")
    await group_state(s, a.conn, group, "only B is left")


@scenario("#13")
async def join_completion_waits_for_pending_members(s: Session) -> None:
    """A rebalance does not complete while a member that got MEMBER_ID_REQUIRED has not joined yet; it completes at
    the rebalance timeout instead."""
    group = s.name("pending")
    a = await new_member(s, group, "A", rebalance_ms=1000)
    await stable_group(s, group, [a])
    await new_member(s, group, "C")
    pending = send_member_join(group, a, topics=("orders", "payments"))
    await a.conn.parked(pending, "A rejoins while C is pending", 600)
    await collect_join(s, a, pending, "A joined")


@scenario("#14")
async def protocol_vote(s: Session) -> None:
    """The protocol is chosen by vote among the ones every member supports, each member voting for its first such
    protocol; a protocol one member lacks is never chosen."""
    sub = subscription("orders")
    group = s.name("vote")
    prefs = {
        "A": (("roundrobin", sub), ("range", sub)),
        "B": (("range", sub), ("roundrobin", sub)),
        "C": (("sticky", sub), ("range", sub), ("roundrobin", sub)),
    }
    members = [await new_member(s, group, name, protocols=p) for name, p in prefs.items()]
    await join_in_order(s, group, members, "range wins two to one")
    group = s.name("vote-common")
    prefs = {"D": (("sticky", sub), ("roundrobin", sub)), "E": (("roundrobin", sub),)}
    members = [await new_member(s, group, name, protocols=p) for name, p in prefs.items()]
    await join_in_order(s, group, members, "only roundrobin is common")


@scenario("#15")
async def rejoin_while_completing_rebalance(s: Session) -> None:
    """In CompletingRebalance a known member rejoining with the same protocols gets the current generation again
    (the leader with the member list) and nothing rebalances; new metadata starts a rebalance."""
    group = s.name("rejoin-cr")
    a, b = await pair(s, group, stable=False)
    await collect_join(s, b, send_member_join(group, b), "B rejoins unchanged")
    await collect_join(s, a, send_member_join(group, a), "A rejoins unchanged")
    await group_state(s, a.conn, group, "still completing")
    pending = send_member_join(group, b, topics=("orders", "payments"))
    await b.conn.parked(pending, "B rejoins with a new subscription", 300)
    await group_state(s, a.conn, group, "rebalancing")
    await collect_join(s, a, send_member_join(group, a), "A rejoins")
    await collect_join(s, b, pending, "B joined")


@scenario("#15")
async def rejoin_while_stable(s: Session) -> None:
    """In Stable a follower rejoining unchanged just gets the current generation (no rebalance); the leader
    rejoining, even unchanged, starts a rebalance; a known member id in an Empty group is UNKNOWN_MEMBER_ID."""
    group = s.name("rejoin-st")
    a, b = await pair(s, group)
    await collect_join(s, b, send_member_join(group, b), "B rejoins unchanged")
    await group_state(s, b.conn, group, "still stable")
    pending = send_member_join(group, a)
    await a.conn.parked(pending, "A (the leader) rejoins unchanged", 300)
    await group_state(s, b.conn, group, "rebalancing")
    await collect_join(s, b, send_member_join(group, b), "B rejoins")
    await collect_join(s, a, pending, "A joined")
    await leave(a.conn, group, a.member_id, "A leaves")
    await leave(b.conn, group, b.member_id, "B leaves")
    await collect_join(s, a, send_member_join(group, a), "A rejoins the Empty group")


@scenario("#16")
async def member_removed_while_parked(s: Session) -> None:
    """A member removed (here by LeaveGroup from elsewhere) while its JoinGroup is parked gets UNKNOWN_MEMBER_ID with
    an empty member id at once."""
    group = s.name("removed")
    a, b = await pair(s, group)
    pending = send_member_join(group, a, topics=("orders", "payments"))
    await a.conn.parked(pending, "A rejoins and waits for B", 300)
    await leave(b.conn, group, a.member_id, "A is made to leave")
    await a.conn.reply(pending, "A's parked join")
    await collect_join(s, b, send_member_join(group, b), "B rejoins alone")


@scenario("#17")
async def static_member_returns_to_a_stable_group(s: Session) -> None:
    """A static member rejoining a Stable group with an empty member id gets a new id and the current generation
    without a rebalance: from v9 the leader is told to skip the assignment; before v9 it is handed the old leader id.
    Its old id is fenced (FENCED_INSTANCE_ID with the instance id, UNKNOWN_MEMBER_ID without)."""
    group = s.name("static")
    a = await new_member(s, group, "A", static=True)
    b = await new_member(s, group, "B")
    await stable_group(s, group, [a, b])
    old = a.member_id
    a.member_id = ""
    a.name = "A2"
    await collect_join(s, a, send_member_join(group, a), "A comes back (v9)")
    await group_state(s, b.conn, group, "no rebalance")
    await heartbeat(b.conn, group, 1, old, "the old id with the instance id", group_instance_id=a.instance_id)
    await heartbeat(b.conn, group, 1, old, "the old id alone")
    await heartbeat(a.conn, group, 1, a.member_id, "the new id", group_instance_id=a.instance_id)
    a.member_id = ""
    a.name = "A3"
    await collect_join(s, a, send_member_join(group, a, version=7), "A comes back again (v7)")
    await group_state(s, b.conn, group, "still no rebalance")


@scenario("#17")
async def static_member_fences_its_parked_join(s: Session) -> None:
    """A static member that comes back with an empty member id while its old id's JoinGroup is parked: the parked
    join is answered FENCED_INSTANCE_ID at once, and the new id takes the old one's place in the rebalance."""
    group = s.name("static-fence")
    a = await new_member(s, group, "A", static=True)
    b, c = await new_member(s, group, "B"), await new_member(s, group, "C")
    await stable_group(s, group, [a, b, c])
    rejoin_b = send_member_join(group, b, topics=("orders", "payments"))
    await b.conn.parked(rejoin_b, "B rejoins with a new subscription", 300)
    parked = send_member_join(group, a)
    await a.conn.parked(parked, "A rejoins and waits for C", 300)
    restarted = Member("A2", await s.connect("client-a2"), instance_id=a.instance_id)
    pending = send_member_join(group, restarted)
    await a.conn.reply(parked, "the old id's parked join")
    await restarted.conn.parked(pending, "A2 waits for C", 300)
    await group_state(s, a.conn, group, "A2 replaced A")
    await collect_join(s, c, send_member_join(group, c), "C rejoins")
    await collect_join(s, b, rejoin_b, "B joined")
    await collect_join(s, restarted, pending, "A2 joined")


@scenario("#18")
async def member_and_instance_validation(s: Session) -> None:
    """A known member's requests: an instance id that belongs to another member is FENCED_INSTANCE_ID; an unknown
    instance id or member id is UNKNOWN_MEMBER_ID (JoinGroup, SyncGroup, Heartbeat alike)."""
    group = s.name("validate")
    a = await new_member(s, group, "A", static=True)
    b = await new_member(s, group, "B", static=True)
    await stable_group(s, group, [a, b])
    conn = await s.connect()
    others = {"instance of another member": b.instance_id, "unknown instance": f"{group}-Z", "no instance": None}
    for label, instance in others.items():
        await heartbeat(conn, group, 1, a.member_id, f"heartbeat, {label}", group_instance_id=instance)
        body = sync_body(group, 1, a.member_id, instance_id=instance)
        await conn.call(ApiKey.SYNC_GROUP, SYNC_V, body, f"sync, {label}")
        if instance is not None:  # without one, A (the leader) rejoining would start a rebalance
            join = join_body(group, a.member_id, instance_id=instance)
            await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join, f"join, {label}")
    await heartbeat(conn, group, 1, "stranger", "heartbeat, unknown member id")
    await group_state(s, conn, group, "unchanged")


@scenario("#13")
async def join_completion_keeps_absent_static_members(s: Session) -> None:
    """At the rebalance timeout an absent static member is kept (an absent dynamic one would be removed); the leader
    being absent, a member that rejoined leads."""
    group = s.name("static-kept")
    a = await new_member(s, group, "A", static=True, rebalance_ms=800)
    b = await new_member(s, group, "B", rebalance_ms=800)
    await stable_group(s, group, [a, b])
    pending = send_member_join(group, b, topics=("orders", "payments"))
    await b.conn.parked(pending, "B rejoins with a new subscription and waits for A", 500)
    await collect_join(s, b, pending, "B joined")
    await group_state(s, b.conn, group, "A is still a member")


@scenario("#17")
async def static_member_returns_while_completing_rebalance(s: Session) -> None:
    """A static member coming back with an empty member id while the group is CompletingRebalance always starts a
    new rebalance (the leader may be assigning for its old id, KAFKA-9801)."""
    group = s.name("static-cr")
    a = await new_member(s, group, "A", static=True)
    b = await new_member(s, group, "B")
    await join_in_order(s, group, [a, b], "form")
    old = a.member_id
    restarted = Member("A2", await s.connect("client-a2"), instance_id=a.instance_id)
    pending = send_member_join(group, restarted)
    await restarted.conn.parked(pending, "A comes back and waits", 300)
    await group_state(s, b.conn, group, "rebalancing")
    await sync(b.conn, group, 1, b.member_id, "B's sync of the old generation")
    await heartbeat(b.conn, group, 1, old, "the old id", group_instance_id=a.instance_id)
    await collect_join(s, b, send_member_join(group, b), "B rejoins")
    await collect_join(s, restarted, pending, "A2 joined")


@scenario("#9")
async def pending_member_id_expires(s: Session) -> None:
    """A member id handed out with MEMBER_ID_REQUIRED is forgotten after the session timeout the first join asked
    for; coming back with it later is UNKNOWN_MEMBER_ID (a new empty-id join still works)."""
    group = s.name("pending-expiry")
    a = await new_member(s, group, "A")
    await stable_group(s, group, [a])
    b = await new_member(s, group, "B", session_ms=500)
    await s.sleep_ms(1000)
    await b.conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, b.member_id, session_ms=500), "B comes back late")
    await group_state(s, a.conn, group, "A alone")


@scenario("#9")
async def old_versions_join_an_existing_group_at_once(s: Session) -> None:
    """Before v4 a member with an empty id is admitted at once, also into a Stable group, which then rebalances."""
    group = s.name("v3-join")
    a = await new_member(s, group, "A")
    await stable_group(s, group, [a])
    b = Member("B", await s.connect("client-b"))
    pending = send_member_join(group, b, version=3)
    await b.conn.parked(pending, "B joins with v3", 300)
    await group_state(s, a.conn, group, "rebalancing")
    await collect_join(s, a, send_member_join(group, a), "A rejoins")
    await collect_join(s, b, pending, "B joined")


@scenario(
    "#10",
    known=(
        Known(
            "range twice: A joins",
            {"error_code": 0},
            NO_ANSWER,
            "Kafka 4.4 accepts a JoinGroup that lists a protocol twice, then its join-completion timer fails in the "
            "protocol vote (IllegalArgumentException in ClassicGroupMember.vote, logged and ignored), so the join "
            "is never answered; group-broker uses the first entry of that name and answers.",
        ),
    ),
)
async def protocol_listed_twice(s: Session) -> None:
    """A JoinGroup that lists the same protocol name twice (with different metadata)."""
    group = s.name("twice")
    sub = subscription("orders")
    a = await new_member(s, group, "A", protocols=(("range", sub), ("range", subscription("payments"))))
    await error_within(s, send_member_join(group, a), "range twice: A joins")


@scenario("#10")
async def empty_protocol_name(s: Session) -> None:
    """A group whose only protocol has an empty name: the name the join answers carry."""
    group = s.name("nameless")
    a = await new_member(s, group, "A", protocols=(("", subscription("orders")),))
    await join_in_order(s, group, [a], "an empty protocol name")
    await sync(a.conn, group, a.generation, a.member_id, "A syncs")


@scenario("#17")
async def odd_group_instance_ids(s: Session) -> None:
    """A group instance id that is empty, or that holds characters outside Kafka's legal set: what each broker
    makes of it."""
    conn = await s.connect()
    odd = {"empty": "", "with a space": "a b", "with a slash": "a/b"}
    for index, (label, instance) in enumerate(odd.items()):
        body = join_body(s.name(f"instance-{index}"), instance_id=instance)
        await conn.call(ApiKey.JOIN_GROUP, JOIN_V, body, f"instance id {label}")


@scenario("#17")
async def static_member_returns_with_a_new_subscription(s: Session) -> None:
    """A static member returning to a Stable group with a new subscription but the same protocol: no rebalance (the
    protocol decides), the member gets the current generation."""
    group = s.name("static-sub")
    a = await new_member(s, group, "A")
    b = await new_member(s, group, "B", static=True)
    await stable_group(s, group, [a, b])
    b.member_id, b.name = "", "B2"
    await collect_join(s, b, send_member_join(group, b, topics=("orders", "payments")), "B comes back")
    await group_state(s, a.conn, group, "no rebalance")
    await sync(b.conn, group, 1, b.member_id, "B2 syncs")


@scenario("#17")
async def static_member_returns_with_another_protocol(s: Session) -> None:
    """A static member returning to a Stable group with a preference that changes the group's vote: that is a
    rebalance, not the current generation handed out again."""
    sub = subscription("orders")
    group = s.name("static-vote")
    range_first = (("range", sub), ("roundrobin", sub))
    a = await new_member(s, group, "A", static=True, protocols=range_first)
    b = await new_member(s, group, "B", protocols=range_first)
    c = await new_member(s, group, "C", protocols=(("roundrobin", sub), ("range", sub)))
    await stable_group(s, group, [a, b, c])
    a.member_id, a.name = "", "A2"
    pending = send_member_join(group, a, protocols=(("roundrobin", sub), ("range", sub)))
    await a.conn.parked(pending, "A comes back preferring roundrobin", 300)
    await group_state(s, b.conn, group, "rebalancing")
    rejoin_b, rejoin_c = send_member_join(group, b), send_member_join(group, c)
    await collect_join(s, b, rejoin_b, "B rejoins")
    await collect_join(s, c, rejoin_c, "C rejoins")
    await collect_join(s, a, pending, "A2 joined")


@scenario("#10")
async def empty_group_takes_any_protocol_type(s: Session) -> None:
    """Once a group is Empty again, a member of another protocol type may join it (the type is the group's only
    while it has members)."""
    group = s.name("retype")
    a = await new_member(s, group, "A")
    await stable_group(s, group, [a])
    await leave(a.conn, group, a.member_id, "A leaves")
    conn = await s.connect("client-b")
    other = dataclasses.replace(join_body(group), protocol_type="connect")
    first = await conn.call(ApiKey.JOIN_GROUP, JOIN_V, other, "a connect worker asks for an id")
    s.alias("B", first.member_id)
    other = dataclasses.replace(join_body(group, first.member_id), protocol_type="connect")
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, other, "the connect worker joins")


@scenario(
    "#15",
    known=(
        Known(
            "B's first join",
            {"error_code": 27},
            NO_ANSWER,
            "Kafka 4.4 replaces a member's parked JoinGroup by its newer one and never answers the first (that "
            "client waits out its request timeout); group-broker answers it REBALANCE_IN_PROGRESS, so every parked "
            "request gets exactly one answer.",
        ),
    ),
)
async def second_join_while_the_first_is_parked(s: Session) -> None:
    """A member whose JoinGroup is parked sends another one on a second connection (a client that gave up on the
    first): what the first is answered, and what the second."""
    group = s.name("double-join")
    a, b, c = [await new_member(s, group, name) for name in "ABC"]
    await stable_group(s, group, [a, b, c])
    first = send_member_join(group, b, topics=("orders", "payments"))
    await b.conn.parked(first, "B rejoins and waits", 300)
    retry = Member("B", await s.connect("client-b"), b.member_id, join_kw={"topics": ("orders", "payments")})
    second = send_member_join(group, retry)
    await error_within(s, first, "B's first join")
    await retry.conn.parked(second, "B's second join waits", 100)
    rejoin_a, rejoin_c = send_member_join(group, a), send_member_join(group, c)
    await collect_join(s, a, rejoin_a, "A rejoins")
    await collect_join(s, c, rejoin_c, "C rejoins")
    await collect_join(s, retry, second, "B's second join")
