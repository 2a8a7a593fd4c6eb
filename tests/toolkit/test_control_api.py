"""The HTTP control API against the broker as a process (`python server.py --override control.listener=...`).

Each control is shown by what a real client experiences: an aiokafka consumer rebalances after
`POST /groups/<id>/rebalance`, rejoins after an injected REBALANCE_IN_PROGRESS (which `/requests` shows), comes
back as a new member after `POST .../expire`; a raw member's session runs out under frozen, advanced time; and a
kafkajs consumer (`js/control_api_test.js`, Node's fetch) is driven through a forced rebalance and a session
expiry. Everything waits on conditions with deadlines; nothing asserts on time.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from broker.config import BrokerConfig, ConfigError
from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.sync_group import SyncGroupRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.support.broker_process import ROOT, BrokerProcess, control_url, running_broker, wait_until_awaited
from tests.support.clients import aiokafka_poll, aiokafka_until

CONTROL = {"control.listener": "http://127.0.0.1:0"}
JS = Path(__file__).resolve().parent / "js"
SUBSCRIPTION = b"\x00\x00\x00\x00\x00\x01\x00\x05topic\xff\xff\xff\xff"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, str]]:
    with running_broker(tmp_path_factory.mktemp("control-api"), CONTROL) as process:
        yield process, control_url(process)


@pytest.fixture
def control(broker: tuple[BrokerProcess, str]) -> str:
    return broker[1]


@pytest.fixture
def bootstrap(broker: tuple[BrokerProcess, str]) -> str:
    return broker[0].bootstrap


async def api(control: str, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, control + path, json=body, **kwargs) as answer,
    ):
        assert answer.content_type == "application/json", await answer.text()
        return answer.status, await answer.json()


async def ok(control: str, method: str, path: str, body: Any = None) -> Any:
    status, data = await api(control, method, path, body)
    assert status == 200, data
    return data


class Rebalances(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.assigned = 0

    async def on_partitions_revoked(self, revoked: object) -> None:
        return None

    async def on_partitions_assigned(self, assigned: object) -> None:
        self.assigned += 1


@contextlib.asynccontextmanager
async def consumer_in(bootstrap: str, group: str) -> AsyncIterator[tuple[AIOKafkaConsumer, Rebalances]]:
    """One aiokafka consumer of a fresh two-partition topic, once it holds its first assignment."""
    topic = f"t-{group}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, 2, 1)])
    await admin.close()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        client_id=f"client-{group}",
        session_timeout_ms=30_000,
        heartbeat_interval_ms=100,
        retry_backoff_ms=50,
        enable_auto_commit=False,
    )
    listener = Rebalances()
    consumer.subscribe([topic], listener=listener)
    await consumer.start()
    try:
        await aiokafka_until(consumer, lambda: listener.assigned >= 1, what="a first assignment")
        yield consumer, listener
    finally:
        await consumer.stop()


async def stable(control: str, group: str, consumer: AIOKafkaConsumer, min_generation: int = 1) -> dict[str, Any]:
    snapshot: dict[str, Any] = {}

    async def check() -> bool:
        status, data = await api(control, "GET", f"/groups/{group}")
        snapshot.update(data)
        return status == 200 and data["state"] == "Stable" and data["generation"] >= min_generation

    await wait_until_awaited(
        check,
        what=f"{group} Stable at generation >= {min_generation}",
        detail=lambda: json.dumps(snapshot),
        step=aiokafka_poll(consumer),
    )
    return snapshot


def test_a_non_loopback_control_listener_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="loopback"):
        BrokerConfig({"control.listener": "http://0.0.0.0:9644"})
    done = subprocess.run(
        [sys.executable, str(ROOT / "server.py"), "--override", "control.listener=http://192.168.1.10:9644"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2
    assert "control.listener" in done.stderr and "loopback" in done.stderr


async def test_the_control_line_follows_bootstrap_and_errors_are_json(broker: tuple[BrokerProcess, str]) -> None:
    process, control = broker
    lines = [line.split("=", 1)[0] for line in process.log_lines() if line.startswith(("BOOTSTRAP=", "CONTROL="))]
    assert lines == ["BOOTSTRAP", "CONTROL"]
    assert control.startswith("http://127.0.0.1:")
    index = await ok(control, "GET", "/")
    assert any(line.startswith("POST /groups/{id}/rebalance") for line in index["endpoints"])
    assert isinstance((await ok(control, "GET", "/groups"))["groups"], list)

    cases: list[tuple[str, str, Any, int, str]] = [
        ("GET", "/groups/no-such-group", None, 404, "no group 'no-such-group'"),
        ("GET", "/groups/no-such-group/timeline", None, 404, "no-such-group"),
        ("POST", "/groups/no-such-group/rebalance", None, 404, "no group"),
        ("POST", "/groups/no-such-group/members/m-1/expire", None, 404, "no member 'm-1'"),
        ("POST", "/time/advance", {}, 400, "'ms' is required"),
        ("POST", "/time/advance", {"ms": -5}, 400, "at least 0"),
        ("POST", "/time/advance", {"ms": "10"}, 400, "must be an integer"),
        ("POST", "/faults/errors", {"api": "NoSuchApi", "error": "NONE"}, 400, "unknown API"),
        ("POST", "/faults/errors", {"api": "Heartbeat", "error": "NO_SUCH_ERROR"}, 400, "NO_SUCH_ERROR"),
        ("POST", "/faults/errors", {"api": "Heartbeat"}, 400, "'error' is required"),
        ("POST", "/requests/recording", {"enabled": "yes"}, 400, "true or false"),
        ("GET", "/groups/x/timeline?format=pdf", None, 400, "format"),
        ("GET", "/requests?limit=x", None, 400, "limit"),
        ("GET", "/no/such/endpoint", None, 404, "Not Found"),
        ("PUT", "/time/advance", {"ms": 1}, 405, "Method Not Allowed"),
    ]
    for method, path, body, status, message in cases:
        got_status, data = await api(control, method, path, body)
        assert (got_status, message in data.get("error", "")) == (status, True), (method, path, data)
    status, data = await api(control, "POST", "/time/advance", data="not json", headers={"Content-Type": "text/plain"})
    assert status == 400 and "not JSON" in data["error"]
    # a page elsewhere cannot use a browser to reach it: foreign Host (DNS rebinding) or Origin headers are refused
    status, data = await api(control, "GET", "/groups", headers={"Host": "evil.example:80"})
    assert status == 403
    status, data = await api(control, "POST", "/time/advance", {"ms": 1}, headers={"Origin": "https://evil.example"})
    assert status == 403
    async with aiohttp.ClientSession() as session, session.get(control + "/metrics") as answer:
        assert answer.status == 200 and answer.content_type == "text/plain"
        assert "group_broker_requests_total" in await answer.text()


async def test_post_time_unfreeze_lets_a_frozen_clock_flow_again(control: str) -> None:
    """Issue #12: time frozen through the control API can be unfrozen through it, from the virtual instant."""
    frozen = await ok(control, "POST", "/time/freeze")
    assert frozen["frozen"] is True
    await ok(control, "POST", "/time/advance", {"ms": 1_000})
    resumed = await ok(control, "POST", "/time/unfreeze")
    assert resumed["frozen"] is False and resumed["now_ms"] >= frozen["now_ms"] + 1_000
    assert (await ok(control, "GET", "/time"))["frozen"] is False


async def test_post_rebalance_makes_an_aiokafka_consumer_rebalance(control: str, bootstrap: str) -> None:
    group = f"forced-{uuid.uuid4().hex[:6]}"
    async with consumer_in(bootstrap, group) as (consumer, listener):
        before = await stable(control, group, consumer)
        assigned = listener.assigned
        answer = await ok(control, "POST", f"/groups/{group}/rebalance", {"reason": "operator says so"})
        assert answer["rebalancing"] and answer["group"]["state"] == "PreparingRebalance"
        await aiokafka_until(consumer, lambda: listener.assigned > assigned, what="the consumer's next rebalance")
        after = await stable(control, group, consumer, before["generation"] + 1)
        assert after["members"] == before["members"]  # same member, new generation
        view = await ok(control, "GET", f"/groups/{group}/timeline?format=json")
        assert any(e["kind"] == "rebalance.started" and e["reason"] == "operator says so" for e in view["events"])
        beats = [e for e in view["events"] if e["kind"] == "Heartbeat" and e["error"] == "REBALANCE_IN_PROGRESS"]
        assert beats and beats[0]["client_id"] == f"client-{group}"


async def test_an_injected_error_shows_in_requests_and_the_client_rejoins(control: str, bootstrap: str) -> None:
    group = f"injected-{uuid.uuid4().hex[:6]}"
    assert (await ok(control, "POST", "/requests/recording", {"enabled": True})) == {"recording": True}
    async with consumer_in(bootstrap, group) as (consumer, _):
        before = await stable(control, group, consumer)
        rule = {"api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS", "count": 1, "group_id": group}
        assert (await ok(control, "POST", "/faults/errors", rule))["error"] == "REBALANCE_IN_PROGRESS"
        await stable(control, group, consumer, before["generation"] + 1)  # the client rejoined
        assert (await ok(control, "GET", "/faults"))["errors"] == []  # the rule was used up

        async def heartbeat_errors() -> list[list[str]]:
            found = await ok(control, "GET", f"/requests?api=Heartbeat&group_id={group}")
            assert found["recording"] is True
            return [r["errors"] for r in found["requests"]]

        errors: list[list[str]] = []

        async def new_generation_beats() -> bool:
            errors[:] = await heartbeat_errors()
            return ["NONE"] in errors

        await wait_until_awaited(
            new_generation_beats,
            what="a successful heartbeat of the new generation",
            detail=lambda: f"heartbeat errors {errors}",
            step=aiokafka_poll(consumer),
        )
        assert errors[0] == ["REBALANCE_IN_PROGRESS"]
        found = await ok(control, "GET", f"/requests?group_id={group}")
        assert {r["client_id"] for r in found["requests"]} == {f"client-{group}"}
        joins = await ok(control, "GET", f"/requests?api=JoinGroup&client_id=client-{group}&limit=1")
        assert joins["count"] == 1 and joins["requests"][0]["api"] == "JOIN_GROUP"


async def test_an_expired_member_comes_back_as_a_new_member(control: str, bootstrap: str) -> None:
    group = f"expired-{uuid.uuid4().hex[:6]}"
    async with consumer_in(bootstrap, group) as (consumer, _):
        before = await stable(control, group, consumer)
        member = before["members"][0]
        answer = await ok(control, "POST", f"/groups/{group}/members/{member}/expire")
        assert answer["expired"] == member and member not in answer["group"]["members"]
        after = await stable(control, group, consumer, before["generation"] + 1)
        assert len(after["members"]) == 1 and after["members"] != [member]
        view = await ok(control, "GET", f"/groups/{group}/timeline?format=json")
        expired = [e for e in view["events"] if e["kind"] == "member.expired"]
        assert [(e["member"], e["reason"]) for e in expired] == [(member, "expired by operator")]
        assert any(e["kind"] == "Heartbeat" and e["error"] == "UNKNOWN_MEMBER_ID" for e in view["events"])


async def test_coordinator_faults_connections_and_latency(control: str, bootstrap: str) -> None:
    group = f"faults-{uuid.uuid4().hex[:6]}"
    await ok(control, "POST", "/requests/recording", {"enabled": True})
    async with consumer_in(bootstrap, group) as (consumer, _):
        await stable(control, group, consumer)
        moved = await ok(control, "POST", f"/groups/{group}/move-coordinator")
        assert isinstance(moved["partition"], int)

        async def saw(error: str) -> bool:
            found = await ok(control, "GET", f"/requests?group_id={group}")
            return any(error in r["errors"] for r in found["requests"])

        # the consumer's next heartbeat, then it looks the coordinator up
        await wait_until_awaited(
            lambda: saw("NOT_COORDINATOR"), what="a NOT_COORDINATOR answer", step=aiokafka_poll(consumer)
        )
        await stable(control, group, consumer)

        loading = await ok(control, "POST", f"/groups/{group}/loading", {"duration_ms": 300})
        assert loading == {"partition": moved["partition"], "duration_ms": 300}
        failing = await ok(control, "POST", "/offsets/fail-next", {"error": "NOT_LEADER_OR_FOLLOWER", "count": 1})
        assert failing == {"failing": "NOT_LEADER_OR_FOLLOWER", "count": 1}
        latency = await ok(control, "POST", "/faults/latency", {"api": "ListGroups", "delay_ms": 5, "count": 2})
        assert latency == {"api": "LIST_GROUPS", "delay_ms": 5, "count": 2}
        [node] = (await ok(control, "GET", "/nodes"))["nodes"]
        cut = await ok(control, "POST", f"/nodes/{node['node_id']}/partition", {"client_id": "nobody"})
        assert cut == {"node_id": node["node_id"], "client_id": "nobody", "new": True}
        faults = await ok(control, "GET", "/faults")
        assert [(r["api"], r["delay_ms"], r["remaining"]) for r in faults["latencies"]] == [("LIST_GROUPS", 5, 2)]
        assert faults["node_partitions"] == [
            {"node_id": node["node_id"], "client_id": "nobody", "held": 0, "held_total": 0}
        ]
        assert await ok(control, "DELETE", "/faults") == {"cleared": True}
        cleared = {
            "errors": [],
            "latencies": [],
            "node_partitions": [],
            "offsets_append_errors": [],
            "marker_errors": [],
            "marker_delays": [],
            "authentication_failures": [],
        }
        assert await ok(control, "GET", "/faults") == cleared

        dropped = await ok(control, "POST", "/connections/drop", {"client_id": f"client-{group}"})
        assert dropped["dropped"] >= 1
        await stable(control, group, consumer)  # the consumer reconnects and stays in its group
        assert (await ok(control, "POST", "/connections/drop", {"client_id": "nobody"}))["dropped"] == 0
    assert await ok(control, "DELETE", "/requests") == {"cleared": True}
    assert (await ok(control, "POST", "/requests/recording", {"enabled": False}))["recording"] is False


async def _silent_member(port: int, group: str, session_timeout_ms: int) -> tuple[WireClient, str]:
    client = await WireClient.connect(port)
    join = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_timeout_ms,
        rebalance_timeout_ms=session_timeout_ms,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
    )
    first = await client.call(ApiKey.JOIN_GROUP, 5, join)
    join.member_id = first.member_id
    joined = await client.call(ApiKey.JOIN_GROUP, 5, join)
    assert joined.error_code == ErrorCode.NONE
    sync = SyncGroupRequest(group_id=group, generation_id=joined.generation_id, member_id=joined.member_id)
    assert (await client.call(ApiKey.SYNC_GROUP, 3, sync)).error_code == ErrorCode.NONE
    return client, joined.member_id


async def test_frozen_time_moves_only_when_advanced(tmp_path: Path) -> None:
    with running_broker(tmp_path, CONTROL) as process:
        control = control_url(process)
        client, member = await _silent_member(process.port, "frozen", session_timeout_ms=60_000)
        frozen = await ok(control, "POST", "/time/freeze")
        assert frozen["frozen"] is True
        assert (await ok(control, "GET", "/groups/frozen"))["members"] == [member]
        advanced = await ok(control, "POST", "/time/advance", {"ms": 59_000})
        assert advanced["now_ms"] - frozen["now_ms"] == 59_000  # frozen: only /time/advance moves it
        assert (await ok(control, "GET", "/groups/frozen"))["members"] == [member]
        await ok(control, "POST", "/time/advance", {"ms": 1_001})  # the session runs out, no waiting
        snapshot = await ok(control, "GET", "/groups/frozen")
        assert (snapshot["state"], snapshot["members"]) == ("Empty", [])
        groups = (await ok(control, "GET", "/groups"))["groups"]
        assert [(g["group_id"], g["state"], g["members"]) for g in groups] == [("frozen", "Empty", 0)]
        text = await _text(control, "/groups/frozen/timeline?format=text")
        assert f"member.expired           {member}" in text and 'reason="session timeout expired"' in text
        await client.close()


async def _text(control: str, path: str) -> str:
    async with aiohttp.ClientSession() as session, session.get(control + path) as answer:
        assert answer.status == 200
        return await answer.text()


def test_a_kafkajs_consumer_driven_through_the_control_api(broker: tuple[BrokerProcess, str], tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js) is not on PATH: the kafkajs tests need it (`make test` installs it)")
    if not (ROOT / "node_modules" / "kafkajs" / "package.json").is_file():
        pytest.fail("kafkajs is not installed in node_modules: run `make test` (npm ci from package-lock.json)")
    process, control = broker
    group = f"kafkajs-{uuid.uuid4().hex[:6]}"
    stderr_path = tmp_path / "kafkajs.stderr.log"
    with stderr_path.open("w") as stderr:
        done = subprocess.run(
            [node, str(JS / "control_api_test.js"), process.bootstrap, control, f"t-{group}", group],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=90,
            cwd=ROOT,
            check=False,
        )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    result = lines[-1] if lines else {}
    assert done.returncode == 0 and result.get("result") == "ok", (
        f"kafkajs script failed ({done.returncode}): {lines}\n{stderr_path.read_text()[-4000:]}"
    )
    joins = [line for line in lines if line.get("event") == "GROUP_JOIN"]
    assert len(joins) >= 3
    first, rebalanced, rejoined = result["members"]
    assert first == rebalanced != rejoined  # a forced rebalance keeps the member; an expiry makes a new one
    assert result["generations"] == sorted(set(result["generations"]))
    assert {"JoinGroup", "SyncGroup", "Heartbeat", "member.expired", "rebalance.completed"} <= set(
        result["timelineKinds"]
    )
