"""kcat 1.7.1 (librdkafka) balanced consumers (`kcat -G group topic`) against the broker process.

Three kcat members share a six-partition topic, one leaves, the other two take over, auto-commits land, and a new
member resumes exactly at the committed offsets. kcat produces the records (`-P -K:`) and, as a plain consumer
(`-C -e`, no group), lists what the log really holds; kafka-python's admin creates the topic (kcat cannot) and reads
the group's state, assignments and commits. Everything waits on conditions with deadlines; nothing asserts on time.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import signal
import subprocess
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import OffsetSpec

from tests.e2e.scenario import assert_broker_accepted_every_request
from tests.support.broker_process import BrokerProcess, wait_until

PARTITIONS = 6
FORMAT = r"%p %o %k\n"  # partition, offset, key: one line per consumed record
REBALANCE = re.compile(r"% Group (\S+) rebalanced \(memberid (\S+)\): (assigned|revoked): ?(.*)")
# kcat applies an unprefixed -X to librdkafka's *topic* config first, and librdkafka has legacy topic-level
# `auto.commit.interval.ms`/`enable.auto.commit` properties, so the consumer's auto-commit interval cannot be set
# from kcat: it stays librdkafka's 5000 ms default (enable.auto.commit defaults to true). Commits are awaited.
GROUP_SETTINGS = {
    "session.timeout.ms": "6000",
    "heartbeat.interval.ms": "1000",
    "auto.offset.reset": "earliest",  # topic property: only used when the group has no commit for a partition
    "topic.metadata.refresh.interval.ms": "2000",
    "fetch.wait.max.ms": "200",
}

Record = tuple[int, int, str]


def _kcat() -> str:
    kcat = shutil.which("kcat")
    if kcat is None:
        pytest.fail("kcat is not on PATH: the kcat end-to-end tests need it (`make test` installs it with apt-get)")
    return kcat


def _parse_record(line: str) -> Record:
    partition, offset, key = line.rstrip("\n").split(" ", 2)
    return int(partition), int(offset), key


class KcatMember:
    """`kcat -G group topic` as a child: stdout records and stderr rebalance lines collected by reader threads."""

    def __init__(self, bootstrap: str, group: str, topic: str, name: str) -> None:
        self.name = name
        settings = {**GROUP_SETTINGS, "client.id": name}
        args = [_kcat(), "-b", bootstrap, "-G", group, "-u", "-f", FORMAT]
        for key, value in settings.items():
            args += ["-X", f"{key}={value}"]
        self.records: list[Record] = []
        self.stderr: list[str] = []
        self.rebalances: list[tuple[str, str, frozenset[int]]] = []  # (member id, assigned|revoked, partitions)
        self.member_ids: set[str] = set()
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(
            [*args, topic], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self._threads = [
            threading.Thread(target=self._read_stdout, name=f"{name}-stdout", daemon=True),
            threading.Thread(target=self._read_stderr, name=f"{name}-stderr", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            record = _parse_record(line)
            with self._lock:
                self.records.append(record)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._lock:
                self.stderr.append(line)
                match = REBALANCE.match(line)
                if match:
                    parts = frozenset(int(p) for p in re.findall(r"\[(\d+)\]", match.group(4)))
                    self.rebalances.append((match.group(2), match.group(3), parts))
                    self.member_ids.add(match.group(2))

    def consumed(self) -> list[Record]:
        with self._lock:
            return list(self.records)

    def assignment(self) -> tuple[str, frozenset[int]] | None:
        """(member id, partitions) of the last rebalance callback, if it was an assignment."""
        with self._lock:
            if not self.rebalances or self.rebalances[-1][1] != "assigned":
                return None
            member_id, _, parts = self.rebalances[-1]
            return member_id, parts

    def owned(self) -> tuple[str, frozenset[int]]:
        view = self.assignment()
        assert view is not None, f"{self.name} holds no assignment:\n{self.stderr_tail()}"
        return view

    def stderr_tail(self, lines: int = 20) -> str:
        with self._lock:
            return "".join(self.stderr[-lines:])

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM: kcat closes the consumer (final commit, LeaveGroup) and exits 0."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout_s)
        finally:
            self.close()
        assert code == 0, f"{self.name} exited {code}:\n{self.stderr_tail()}"
        assert any(r[1] == "revoked" for r in self.rebalances[-1:]), f"{self.name} did not revoke on close"

    def close(self) -> None:
        """Kill if still running; join the readers and close both pipes (safe to call twice)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        for thread in self._threads:
            thread.join(10)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def _run_kcat(args: list[str], stdin: str | None = None, timeout_s: float = 60.0) -> str:
    result = subprocess.run([_kcat(), *args], input=stdin, capture_output=True, text=True, timeout=timeout_s)
    assert result.returncode == 0, f"kcat {args} exited {result.returncode}:\n{result.stderr}"
    assert "ERROR" not in result.stderr, result.stderr
    return result.stdout


def _produce(bootstrap: str, topic: str, keys: list[str]) -> None:
    lines = "".join(f"{key}:value-of-{key}\n" for key in keys)
    _run_kcat(["-b", bootstrap, "-P", "-t", topic, "-K:"], stdin=lines)


def _log_contents(bootstrap: str, topic: str) -> list[Record]:
    """Every record in the topic, read without a group (`-C -e` from the beginning, exit at the end)."""
    out = _run_kcat(["-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", FORMAT])
    return [_parse_record(line) for line in out.splitlines(keepends=True)]


class GroupAdmin:
    """kafka-python's admin, reading what the broker says about the group and the topic."""

    def __init__(self, bootstrap: str) -> None:
        self.client = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kcat-test-admin")

    def create_topic(self, topic: str) -> None:
        self.client.create_topics({topic: {"num_partitions": PARTITIONS}}, wait_for_metadata=True)

    def end_offsets(self, topic: str) -> dict[int, int]:
        specs = {TopicPartition(topic, p): OffsetSpec.LATEST for p in range(PARTITIONS)}
        return {tp.partition: found.offset for tp, found in self.client.list_partition_offsets(specs).items()}

    def committed(self, group: str) -> dict[int, int]:
        offsets = self.client.list_group_offsets(group)[group]
        return {tp.partition: meta.offset for tp, meta in offsets.items()}

    def describe(self, group: str) -> dict[str, Any]:
        return self.client.describe_groups([group])[group]


@contextlib.contextmanager
def group_admin(bootstrap: str) -> Iterator[GroupAdmin]:
    admin = GroupAdmin(bootstrap)
    try:
        yield admin
    finally:
        admin.client.close()


def _settle(what: str, check: Callable[[dict[str, Any]], bool], timeout_s: float = 30.0) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    try:
        wait_until(lambda: check(seen), timeout_s=timeout_s, interval_s=0.1)
    except AssertionError:
        raise AssertionError(f"{what} not within {timeout_s}s; last seen: {seen}") from None
    return seen


def _wait_stable(admin: GroupAdmin, group: str, topic: str, members: list[KcatMember]) -> dict[str, frozenset[int]]:
    """The broker says Stable with exactly these members, each member's own rebalance callback holds the partitions
    the broker gave it, and together they own every partition exactly once."""

    def check(seen: dict[str, Any]) -> bool:
        views = [m.assignment() for m in members]
        seen["kcat"] = views
        if any(view is None for view in views):
            return False
        described = seen["broker"] = admin.describe(group)
        if described["group_state"] != "Stable" or described["protocol_type"] != "consumer":
            return False
        broker_view = {
            m["member_id"]: frozenset(
                p for a in m["member_assignment"]["assigned_partitions"] if a["topic"] == topic for p in a["partitions"]
            )
            for m in described["members"]
        }
        if broker_view != dict(view for view in views if view is not None):
            return False
        return sorted(p for parts in broker_view.values() for p in parts) == list(range(PARTITIONS))

    return dict(_settle(f"group {group} stable with {[m.name for m in members]}", check)["kcat"])


def _wait_consumed(members: list[KcatMember], expected: set[Record], what: str) -> None:
    def check(seen: dict[str, Any]) -> bool:
        got = {r for m in members for r in m.consumed()}
        seen["missing"] = sorted(expected - got)[:10]
        return expected <= got

    _settle(what, check)


def _wait_committed(admin: GroupAdmin, group: str, expected: dict[int, int]) -> None:
    def check(seen: dict[str, Any]) -> bool:
        seen["committed"] = admin.committed(group)
        return seen["committed"] == expected

    _settle(f"auto-commits of {group} reaching {expected}", check)


def _new_records(bootstrap: str, topic: str, before: list[Record], keys: list[str]) -> set[Record]:
    """Produce `keys` with kcat and return their (partition, offset, key) as the log now holds them."""
    _produce(bootstrap, topic, keys)
    after = Counter(_log_contents(bootstrap, topic))
    assert not Counter(before) - after, "records already in the log are still there"
    added = after - Counter(before)
    assert sorted(k for _, _, k in added) == sorted(keys), "the log holds each produced key exactly once"
    return set(added)


@pytest.mark.integration
def test_kcat_balanced_consumers_share_partitions_survive_a_leaving_member_and_resume_at_commits(
    bootstrap: str, broker_process: BrokerProcess
) -> None:
    _kcat()  # fail at once, clearly, without kcat
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"kcat-orders-{suffix}", f"kcat-billing-{suffix}"
    started: list[KcatMember] = []

    def member(name: str) -> KcatMember:
        started.append(KcatMember(bootstrap, group, topic, name))
        return started[-1]

    with group_admin(bootstrap) as admin:
        try:
            admin.create_topic(topic)

            # 1. Three members split the six partitions; 600 keyed records are each consumed once, by their owner.
            members = [member(f"kcat-member{i}") for i in range(3)]
            owners = _wait_stable(admin, group, topic, members)
            first = _new_records(bootstrap, topic, [], [f"key-{i}" for i in range(600)])
            ends = admin.end_offsets(topic)
            assert len([p for p, n in ends.items() if n > 0]) == PARTITIONS, ends  # keys spread over all partitions
            for partition, end in ends.items():
                assert sorted(o for p, o, _ in first if p == partition) == list(range(end))
            _wait_consumed(members, first, "600 records consumed by three members")
            for m in members:
                member_id, owned = m.owned()
                assert owners[member_id] == owned
                assert {p for p, _, _ in m.consumed()} <= owned, f"{m.name} read a partition it does not own"
            assert Counter(r for m in members for r in m.consumed()) == Counter(first), "each record exactly once"
            _wait_committed(admin, group, ends)

            # 2. One member leaves: the other two take over every partition and keep consuming new records.
            members[0].stop()
            survivors = members[1:]
            owners = _wait_stable(admin, group, topic, survivors)
            seen_before = {m.name: len(m.consumed()) for m in survivors}
            log_so_far = sorted(first)
            second = _new_records(bootstrap, topic, log_so_far, [f"after-leave-{i}" for i in range(120)])
            _wait_consumed(survivors, second, "records produced after the leave consumed by the two survivors")
            for m in survivors:
                _, owned = m.owned()
                new = m.consumed()[seen_before[m.name] :]
                assert {p for p, _, _ in new} <= owned, f"{m.name} read a partition it does not own"
            everything = Counter(r for m in members for r in m.consumed())
            assert everything == Counter(first | second), "nothing lost or read twice across the rebalance"
            ends = admin.end_offsets(topic)
            _wait_committed(admin, group, ends)

            # 3. Everyone stops; what is produced now lies after the last commit.
            for m in survivors:
                m.stop()
            assert admin.describe(group)["group_state"] == "Empty"
            third = _new_records(bootstrap, topic, sorted(first | second), [f"while-away-{i}" for i in range(60)])
            assert all(o >= ends[p] for p, o, _ in third)

            # 4. A new member (auto.offset.reset=earliest, used only without a commit) resumes at the commits.
            newcomer = member("kcat-newcomer")
            _wait_stable(admin, group, topic, [newcomer])
            _wait_consumed([newcomer], third, "records produced while the group was empty")
            _wait_committed(admin, group, admin.end_offsets(topic))
            newcomer.stop()
            # Within a partition records arrive in offset order, so anything before the commits would come first.
            assert Counter(newcomer.consumed()) == Counter(third)
            firsts = {p: min(o for q, o, _ in newcomer.consumed() if q == p) for p, _, _ in third}
            assert firsts == {p: ends[p] for p in firsts}
        finally:
            for m in started:
                m.close()

    assert_broker_accepted_every_request(broker_process, "kcat")
    # Every member left with LeaveGroup when stopped (kcat closes the consumer on SIGTERM); none was expired.
    group_events = [json.loads(line) for line in broker_process.log_lines() if line.startswith("{")]
    group_events = [e for e in group_events if e.get("group") == group]
    assert not [e for e in group_events if e["event"] == "member.expired"]
    left = {e["member"] for e in group_events if e["event"] == "member.left"}
    assert {member_id for m in started for member_id in m.member_ids} <= left
