"""The transaction controls over HTTP, against the broker as a process, with an aiokafka transactional producer:
list and describe, held and failed markers, expiring a transaction, the transaction timeline in its three formats
(and `group-broker transactions timeline`), and what the controls refuse. Waits are on conditions; time is frozen
where a step must wait for `advance`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from cli.main import main
from tests.support.broker_process import BrokerProcess, control_url, running_broker

CONTROL = {"control.listener": "http://127.0.0.1:0"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, str]]:
    with running_broker(tmp_path_factory.mktemp("txn-control-api"), CONTROL) as process:
        yield process, control_url(process)


async def call(control: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.request(method, control + path, json=body) as answer:
        if answer.content_type == "application/json":
            return answer.status, await answer.json()
        return answer.status, await answer.text()


async def ok(control: str, method: str, path: str, body: Any = None) -> Any:
    status, data = await call(control, method, path, body)
    assert status == 200, data
    return data


@contextlib.asynccontextmanager
async def producer_of(bootstrap: str, transactional_id: str, topic: str) -> AsyncIterator[AIOKafkaProducer]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, 2, 1)])
    await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id)
    await producer.start()
    try:
        yield producer
    finally:
        await producer.stop()


async def state_of(control: str, transactional_id: str, state: str) -> dict[str, Any]:
    found: dict[str, Any] = {}

    async def reached() -> bool:
        found.update(await ok(control, "GET", f"/transactions/{transactional_id}"))
        return found["state"] == state

    deadline = asyncio.get_running_loop().time() + 20
    while not await reached():
        assert asyncio.get_running_loop().time() < deadline, found
        await asyncio.sleep(0.02)
    return found


async def test_held_markers_then_an_expired_transaction_seen_through_the_control_api(
    broker: tuple[BrokerProcess, str], capsys: pytest.CaptureFixture[str]
) -> None:
    process, control = broker
    tid = "http-txn"
    async with producer_of(process.bootstrap, tid, "http-txn-topic") as producer:
        await producer.begin_transaction()
        await producer.send_and_wait("http-txn-topic", b"one", partition=0)
        await producer.send_and_wait("http-txn-topic", b"two", partition=1)
        listed = await ok(control, "GET", "/transactions")
        [mine] = [t for t in listed["transactions"] if t["transactional_id"] == tid]
        assert (mine["state"], mine["partitions"]) == ("Ongoing", ["http-txn-topic-0", "http-txn-topic-1"])

        await ok(control, "POST", "/time/freeze")
        answer = await ok(control, "POST", "/faults/markers/delay", {"delay_ms": 60_000, "transactional_id": tid})
        assert answer == {"delay_ms": 60_000, "count": None, "transactional_id": tid}
        rules = await ok(control, "GET", "/faults")
        assert rules["marker_delays"] == [{"remaining": None, "transactional_id": tid, "delay_ms": 60_000}]
        await producer.send_offsets_to_transaction({TopicPartition("http-txn-topic", 0): 1}, "http-txn-group")
        await producer.commit_transaction()  # answered at PrepareCommit: the markers are held back
        held = await ok(control, "GET", f"/transactions/{tid}")
        assert held["state"] == "PrepareCommit"
        assert held["held_markers"][0]["release_in_ms"] == 60_000
        await ok(control, "DELETE", "/faults")  # the held round still goes at its deadline
        await ok(control, "POST", "/time/advance", {"ms": 60_000})
        await state_of(control, tid, "CompleteCommit")

        failing = await ok(control, "POST", "/faults/markers/fail-next", {"count": 2})
        assert failing == {"failing": "NOT_LEADER_OR_FOLLOWER", "count": 2, "transactional_id": None}
        await ok(control, "DELETE", "/faults")
        await ok(control, "POST", "/time/unfreeze")

        await producer.begin_transaction()
        await producer.send_and_wait("http-txn-topic", b"three", partition=0)
        expired = await ok(control, "POST", f"/transactions/{tid}/expire")
        assert expired["expired"] == tid
        aborted = await state_of(control, tid, "CompleteAbort")
        assert aborted["producer_epoch"] == held["producer_epoch"] + 1

    status, refused = await call(control, "POST", f"/transactions/{tid}/expire")
    assert status == 400 and "only an Ongoing transaction times out" in refused["error"], refused
    status, refused = await call(control, "POST", "/transactions/nobody/expire")
    assert status == 404 and refused == {"error": "no transactional id 'nobody' on this broker"}
    status, refused = await call(control, "GET", "/transactions/nobody")
    assert status == 404

    view = await ok(control, "GET", f"/transactions/{tid}/timeline?format=json")
    kinds = [e["kind"] for e in view["events"]]
    for kind in ("InitProducerId", "AddPartitionsToTxn", "EndTxn", "fault.markers_held", "markers.written"):
        assert kind in kinds, kinds
    assert [b["state"] for b in view["states"]][-3:] == ["Ongoing", "PrepareAbort", "CompleteAbort"]
    status, text = await call(control, "GET", f"/transactions/{tid}/timeline?format=text")
    assert status == 200 and text.startswith(f"transaction {tid}\n  state=CompleteAbort ")
    assert "txn.timed_out" in text and "markers.written" in text
    status, page = await call(control, "GET", f"/transactions/{tid}/timeline")
    assert status == 200 and '<g class="state-band" data-state="CompleteAbort">' in page
    assert 'data-partition="http-txn-topic-1"' in page
    status, missing = await call(control, "GET", "/transactions/nobody/timeline")
    assert status == 404 and missing["error"].startswith("no transactional id 'nobody' on this broker")

    status, text_of_group = await call(control, "GET", "/groups/http-txn-group/timeline?format=text")
    assert status == 200 and f"  transactions that sent its offsets: {tid}\n" in text_of_group
    status, group_page = await call(control, "GET", "/groups/http-txn-group/timeline")
    assert f"<a class='transaction' href='../../transactions/{tid}/timeline'>{tid}</a>" in group_page

    printed = await asyncio.to_thread(
        main, ["transactions", "timeline", "--transactional-id", tid, "--control", control]
    )
    assert printed == 0
    printed_lines = capsys.readouterr().out.splitlines()

    def timed(lines: list[str]) -> list[str]:  # the wall time of +0 is read anew for each view
        return [line for line in lines if "(+0 = " not in line]

    assert timed(printed_lines) == timed([*text.splitlines(), ""])  # `transactions timeline` prints the text view
