from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from broker.app import Broker
from broker.config import BrokerConfig

FAST_GROUP_CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "100",
    "offsets.topic.num.partitions": "4",
}


#: For tests that write transactional batches and markers by hand, without a transaction coordinator behind the
#: producer: Kafka's own switch for the check that a partition was added to the producer's transaction (KIP-890).
UNVERIFIED_TRANSACTIONS = {"transaction.partition.verification.enable": "false"}


def broker_config(tmp_path: Path, **overrides: str) -> BrokerConfig:
    raw = {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path / "data"), **FAST_GROUP_CONFIG}
    raw.update({k.replace("_", "."): v for k, v in overrides.items()})
    return BrokerConfig(raw)


@asynccontextmanager
async def running_broker(tmp_path: Path, **overrides: str) -> AsyncIterator[Broker]:
    """A broker on ``tmp_path`` for the length of the block; a second block on the same path is a restart."""
    instance = Broker(broker_config(tmp_path, **overrides))
    await instance.start()
    try:
        await instance.loaded.wait()
        yield instance
    finally:
        await instance.stop()


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    instance = Broker(broker_config(tmp_path))
    await instance.start()
    await instance.loaded.wait()  # group requests get COORDINATOR_LOAD_IN_PROGRESS until then
    yield instance
    await instance.stop()
