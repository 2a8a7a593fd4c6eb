"""group-broker and Kafka side by side, with the same group settings, for the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reference.settings import SHARED_GROUP_SETTINGS
from tests.support.broker_process import BrokerProcess, running_broker


@pytest.fixture(scope="session")
def differential_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with running_broker(tmp_path_factory.mktemp("differential-data"), SHARED_GROUP_SETTINGS) as broker:
        yield broker
