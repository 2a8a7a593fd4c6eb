"""End-to-end fixtures: one real broker process per test module, reached over TCP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess, running_broker


@pytest.fixture(scope="module")
def broker_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data_dir: Path = tmp_path_factory.mktemp("broker-data")
    with running_broker(data_dir) as broker:
        yield broker


@pytest.fixture(scope="module")
def bootstrap(broker_process: BrokerProcess) -> str:
    return broker_process.bootstrap
