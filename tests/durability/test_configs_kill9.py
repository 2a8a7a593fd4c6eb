"""Config changes survive kill -9: what AlterConfigs and IncrementalAlterConfigs acknowledged (a topic's overrides
in `topics.json`, the broker's dynamic configs in `broker-configs.json`) is there after a SIGKILL and a restart, and
takes effect: a topic's and a broker default's max.message.bytes still refuse a bigger batch."""

from __future__ import annotations

from pathlib import Path

from protocol.errors import ErrorCode
from tests.broker.configs_wire import BROKER, SET, TOPIC, alter_configs, described, incremental_alter
from tests.broker.wire import WireClient
from tests.durability.offsets_client import connect, create_topic
from tests.support.broker_process import BrokerProcess
from tests.support.data_plane import batch, produce

OK = (ErrorCode.NONE, None)


async def _client(broker: BrokerProcess) -> WireClient:
    return await connect(int(broker.bootstrap.rsplit(":", 1)[1]))


async def test_acknowledged_config_changes_survive_kill9(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        client = await _client(broker)
        await create_topic(client, "pinned", 1)
        await create_topic(client, "follows", 1)
        assert (
            await alter_configs(client, TOPIC, "pinned", {"max.message.bytes": "200", "retention.ms": "86400000"}) == OK
        )
        assert await incremental_alter(client, TOPIC, "pinned", [("cleanup.policy", SET, "compact,delete")]) == OK
        cluster = {"min.insync.replicas": "1", "message.max.bytes": "300"}
        assert await alter_configs(client, BROKER, "", cluster) == OK
        assert await incremental_alter(client, BROKER, "1", [("log.retention.bytes", SET, "123456789")]) == OK
        await client.close()
        broker.kill()

        broker.start()
        client = await _client(broker)
        pinned = await described(client, TOPIC, "pinned")
        shown = {name: pinned[name].value for name in ("max.message.bytes", "retention.ms", "cleanup.policy")}
        assert shown == {"max.message.bytes": "200", "retention.ms": "86400000", "cleanup.policy": "compact,delete"}
        node = await described(client, BROKER, "1")
        assert (node["message.max.bytes"].value, node["log.retention.bytes"].value) == ("300", "123456789")
        big = batch(b"x" * 400)
        assert (await produce(client, "follows", big)).error_code == ErrorCode.MESSAGE_TOO_LARGE  # broker default
        assert (await produce(client, "pinned", batch(b"x" * 250))).error_code == ErrorCode.MESSAGE_TOO_LARGE
        await client.close()
    finally:
        broker.kill()
