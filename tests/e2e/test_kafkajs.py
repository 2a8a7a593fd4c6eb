"""kafkajs 2.2.4 against the broker process: a three-member group, a member leaving, commits and resuming.

The node side is three small scripts in `tests/e2e/js/` speaking JSON lines on stdin/stdout: `admin.js` and
`producer.js` answer requests (`{"id", "op", ...}` -> `{"id", "result"|"error"}`), `consumer.js` is one group
member that prints one line per assignment, message and commit and leaves the group cleanly on SIGTERM.
Everything waits on conditions with deadlines; nothing asserts on time.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.broker_process import ROOT, BrokerProcess, wait_until

JS = Path(__file__).resolve().parent / "js"
PARTITIONS = 6
BAD_REQUEST_EVENTS = (
    "request.malformed",
    "connection.closed_on_bad_request",
    "request.handler_failed",
    "response.encode_failed",
)

Event = dict[str, Any]


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the kafkajs end-to-end tests need Node.js (see README, Requirements)")
    if not (ROOT / "node_modules" / "kafkajs" / "package.json").is_file():
        pytest.fail("kafkajs is not installed in node_modules: run `make test` (npm ci from package-lock.json)")
    return node


class NodeScript:
    """One `node tests/e2e/js/<script>` child: stdout parsed as JSON lines by a reader thread, stderr to a file."""

    def __init__(self, script: str, args: list[str], log_dir: Path, name: str) -> None:
        self.name = name
        self.stderr_path = log_dir / f"{name}.stderr.log"
        self._stderr = self.stderr_path.open("w")
        self.events: list[Event] = []
        self.eof = False
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        try:
            self.proc = subprocess.Popen(
                [_node(), str(JS / script), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                cwd=ROOT,
            )
        except BaseException:
            self._stderr.close()
            raise
        self._reader = threading.Thread(target=self._read, name=f"{name}-stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                event = {"event": "unparsed", "line": line}
            with self._cond:
                self.events.append(event)
                self._cond.notify_all()
        with self._cond:
            self.eof = True
            self._cond.notify_all()

    def stderr_tail(self, lines: int = 30) -> str:
        self._stderr.flush()
        text = self.stderr_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def wait_for(self, predicate: Callable[[list[Event]], Any], timeout_s: float, what: str) -> Any:
        """Block until `predicate(events)` is truthy and return it; fail if the script exits first or time runs out."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                result = predicate(self.events)
                if result:
                    return result
                if self.eof:
                    raise AssertionError(
                        f"{self.name} exited ({self.proc.poll()}) before {what}; "
                        f"last events {self.events[-5:]}\nstderr:\n{self.stderr_tail()}"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"{self.name}: {what} not within {timeout_s}s\nstderr:\n{self.stderr_tail()}")
                self._cond.wait(remaining)

    def wait_event(self, kind: str, timeout_s: float = 30.0) -> Event:
        return self.wait_for(lambda evs: next((e for e in evs if e.get("event") == kind), None), timeout_s, kind)

    def of_kind(self, kind: str) -> list[Event]:
        with self._cond:
            return [e for e in self.events if e.get("event") == kind]

    def call(self, op: str, timeout_s: float = 30.0, **args: Any) -> Any:
        request_id = next(self._ids)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": request_id, "op": op, **args}) + "\n")
        self.proc.stdin.flush()
        reply = self.wait_for(
            lambda evs: next((e for e in evs if e.get("id") == request_id), None), timeout_s, f"reply to {op}"
        )
        if "error" in reply:
            raise AssertionError(f"{self.name} {op} failed: {reply['error']}\nstderr:\n{self.stderr_tail()}")
        return reply["result"]

    def terminate(self) -> None:
        """SIGTERM: the scripts' clean shutdown (disconnect, LeaveGroup for a consumer)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def close(self, timeout_s: float = 20.0) -> int:
        """Graceful stop (stdin closed), SIGKILL if that does not finish in time; always releases every pipe."""
        try:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            try:
                code = self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait(10)
            return code
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
            self._reader.join(10)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self._stderr.close()


class Harness:
    """The node children of one test, all closed (and any survivor killed) when the test ends."""

    def __init__(self, bootstrap: str, log_dir: Path, stack: contextlib.ExitStack) -> None:
        self.bootstrap = bootstrap
        self.log_dir = log_dir
        self._stack = stack
        self._count = itertools.count()

    def start(self, script: str, name: str, *args: str) -> NodeScript:
        child = NodeScript(script, [self.bootstrap, *args], self.log_dir, f"{name}-{next(self._count)}")
        self._stack.callback(child.close)
        return child

    def rpc(self, script: str, name: str) -> NodeScript:
        child = self.start(script, name)
        child.wait_event("ready")
        return child

    def consumer(self, name: str, group: str, topic: str) -> NodeScript:
        return self.start("consumer.js", name, json.dumps({"group": group, "topic": topic, "clientId": name}))


@contextlib.contextmanager
def harness(bootstrap: str, log_dir: Path) -> Iterator[Harness]:
    with contextlib.ExitStack() as stack:
        yield Harness(bootstrap, log_dir, stack)


# -- helpers over the scripts' events -------------------------------------------------------------------------


def _records(consumer: NodeScript) -> list[tuple[int, int, str]]:
    return [(e["partition"], e["offset"], e["key"]) for e in consumer.of_kind("message")]


def _last_assignment(consumer: NodeScript, topic: str) -> tuple[str, frozenset[int]] | None:
    """(member id, partitions) from the member's last GROUP_JOIN, if it joined at all."""
    joined = consumer.of_kind("joined")
    if not joined:
        return None
    return joined[-1]["memberId"], frozenset(joined[-1]["assignment"].get(topic, []))


def _owned(consumer: NodeScript, topic: str) -> tuple[str, frozenset[int]]:
    view = _last_assignment(consumer, topic)
    assert view is not None, f"{consumer.name} never joined"
    return view


def _wait_stable(admin: NodeScript, group: str, topic: str, members: list[NodeScript]) -> dict[str, frozenset[int]]:
    """Wait until the broker reports the group Stable with exactly `members`, whose assignments (as DescribeGroups
    and each member's own GROUP_JOIN both report them) split the topic's partitions without overlap."""
    seen: dict[str, Any] = {}

    def stable() -> bool:
        views = [_last_assignment(m, topic) for m in members]
        if any(view is None for view in views):
            return False
        described = admin.call("describeGroup", group=group)
        seen["described"], seen["views"] = described, views
        if described["state"] != "Stable" or described["protocolType"] != "consumer":
            return False
        broker_view = {m["memberId"]: frozenset(m["assignment"].get(topic, [])) for m in described["members"]}
        client_view = dict(view for view in views if view is not None)
        if broker_view != client_view:
            return False
        owned = [p for parts in broker_view.values() for p in parts]
        return sorted(owned) == list(range(PARTITIONS))

    try:
        wait_until(stable, timeout_s=30, interval_s=0.1)
    except AssertionError:
        raise AssertionError(f"group {group} never settled: {seen}") from None
    return dict(seen["views"])


def _wait_committed(admin: NodeScript, group: str, topic: str, expected: dict[int, int]) -> None:
    seen: dict[str, Any] = {}

    def caught_up() -> bool:
        committed = {p["partition"]: p["offset"] for p in admin.call("fetchOffsets", group=group, topic=topic)}
        seen["committed"] = committed
        return committed == expected

    try:
        wait_until(caught_up, timeout_s=30, interval_s=0.1)
    except AssertionError:
        raise AssertionError(f"commits of {group} never reached {expected}: {seen}") from None


def _high_watermarks(admin: NodeScript, topic: str) -> dict[int, int]:
    return {p["partition"]: p["high"] for p in admin.call("topicOffsets", topic=topic)}


def _produce(producer: NodeScript, topic: str, keys: list[str]) -> set[tuple[int, int, str]]:
    acked = producer.call("send", topic=topic, messages=[{"key": k, "value": f"value-of-{k}"} for k in keys])
    assert [r["key"] for r in acked] == keys
    return {(r["partition"], r["offset"], r["key"]) for r in acked}


def _wait_consumed(
    consumers: list[NodeScript], expected: set[tuple[int, int, str]], what: str, timeout_s: float = 30.0
) -> None:
    def done() -> bool:
        got: set[tuple[int, int, str]] = set()
        for c in consumers:
            got.update(_records(c))
        return expected <= got

    try:
        wait_until(done, timeout_s=timeout_s, interval_s=0.05)
    except AssertionError:
        got = {r for c in consumers for r in _records(c)}
        missing = sorted(expected - got)
        raise AssertionError(f"{what}: {len(missing)} records never consumed, e.g. {missing[:10]}") from None


def _assert_broker_clean(broker: BrokerProcess) -> None:
    bad = [line for line in broker.log_lines() if any(f'"{event}"' in line for event in BAD_REQUEST_EVENTS)]
    assert not bad, "broker rejected kafkajs requests:\n" + "".join(bad[:10])


def _group_events(broker: BrokerProcess, group: str, *names: str) -> list[Event]:
    events = []
    for line in broker.log_lines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("group") == group and event.get("event") in names:
                events.append(event)
    return events


def _assert_left_cleanly(broker: BrokerProcess, group: str, members: list[NodeScript], topic: str) -> None:
    """Every stopped member sent LeaveGroup (consumer.disconnect() ran); none was expired by its session timeout."""
    left = {e["member"] for e in _group_events(broker, group, "member.left")}
    expired = _group_events(broker, group, "member.expired")
    assert not expired, expired
    assert {_owned(m, topic)[0] for m in members} <= left, (left, [m.name for m in members])


def _stop(consumer: NodeScript) -> None:
    consumer.terminate()
    consumer.wait_event("stopped", timeout_s=30)
    assert consumer.close() == 0, consumer.stderr_tail()
    assert not consumer.of_kind("crash"), consumer.of_kind("crash")


# -- the acceptance test ---------------------------------------------------------------------------------------


@pytest.mark.integration
def test_kafkajs_group_shares_partitions_survives_a_leaving_member_and_resumes_at_commits(
    bootstrap: str, broker_process: BrokerProcess, tmp_path: Path
) -> None:
    _node()  # fail at once, clearly, without node or kafkajs
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"kafkajs-orders-{suffix}", f"kafkajs-billing-{suffix}"
    with harness(bootstrap, tmp_path) as h:
        admin = h.rpc("admin.js", "admin")
        assert admin.call("createTopic", topic=topic, partitions=PARTITIONS) is True
        assert _high_watermarks(admin, topic) == dict.fromkeys(range(PARTITIONS), 0)
        producer = h.rpc("producer.js", "producer")

        # 1. Three members split the six partitions; 600 keyed records are each consumed once, by their owner.
        members = [h.consumer(f"member{i}", group, topic) for i in range(3)]
        owners = _wait_stable(admin, group, topic, members)
        first = _produce(producer, topic, [f"key-{i}" for i in range(600)])
        per_partition = Counter(p for p, _, _ in first)
        assert len(per_partition) == PARTITIONS, per_partition  # the keys spread over every partition
        for partition, count in per_partition.items():
            assert sorted(o for p, o, _ in first if p == partition) == list(range(count))
        assert _high_watermarks(admin, topic) == dict(per_partition)
        _wait_consumed(members, first, "three members")
        for member in members:
            member_id, owned = _owned(member, topic)
            assert owners[member_id] == owned
            assert {p for p, _, _ in _records(member)} <= owned, f"{member.name} read a partition it does not own"
        all_records = [r for m in members for r in _records(m)]
        assert Counter(all_records) == Counter(first), "every record exactly once, with the key it was produced with"
        _wait_committed(admin, group, topic, dict(per_partition))

        # 2. One member leaves (LeaveGroup on SIGTERM): the other two take over all six partitions and keep going.
        _stop(members[0])
        survivors = members[1:]
        owners = _wait_stable(admin, group, topic, survivors)
        assert set(owners) == {_owned(m, topic)[0] for m in survivors}
        before = {m.name: len(_records(m)) for m in survivors}
        second = _produce(producer, topic, [f"after-leave-{i}" for i in range(120)])
        _wait_consumed(survivors, second, "two survivors")
        for member in survivors:
            _, owned = _owned(member, topic)
            new = _records(member)[before[member.name] :]
            assert {p for p, _, _ in new} <= owned, f"{member.name} read a partition it does not own"
        all_records = [r for m in members for r in _records(m)]
        assert Counter(all_records) == Counter(first | second), "nothing lost or read twice across the rebalance"
        ends = _high_watermarks(admin, topic)
        _wait_committed(admin, group, topic, ends)

        # 3. Everyone stops; what is produced now lies after the last commit.
        for member in survivors:
            _stop(member)
        assert admin.call("describeGroup", group=group)["state"] == "Empty"
        third = _produce(producer, topic, [f"while-away-{i}" for i in range(60)])
        assert all(o >= ends[p] for p, o, _ in third)

        # 4. A new member (fromBeginning: true, which only applies without commits) resumes exactly at the commits.
        newcomer = h.consumer("newcomer", group, topic)
        _wait_stable(admin, group, topic, [newcomer])
        _wait_consumed([newcomer], third, "the new member")
        _wait_committed(admin, group, topic, _high_watermarks(admin, topic))
        _stop(newcomer)
        # Within a partition records arrive in offset order, so anything before the commits would have come first.
        assert Counter(_records(newcomer)) == Counter(third)
        firsts = {p: min(o for q, o, _ in _records(newcomer) if q == p) for p, _, _ in third}
        assert firsts == {p: ends[p] for p in firsts}
        _assert_left_cleanly(broker_process, group, [*members, newcomer], topic)

    _assert_broker_clean(broker_process)
