"""The `transaction.version` feature level decides which transaction protocol the Java client speaks (KIP-890).

At the default level (2, as a new Kafka 4.4 cluster) tests/e2e/test_transactions.py shows the Java client 4.4 on
transaction version 2. Here the broker finalizes level 0 (group-broker's `transaction.version=0`; Kafka's storage
formatted with `--feature transaction.version=0`): the same client falls back to version 0/1, sending
AddPartitionsToTxn and AddOffsetsToTxn and EndTxn v4 at most, and the consume-transform-produce scenario still
holds: the version 0/1 path stays tested end to end on both brokers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import target
from tests.e2e.java_client import JavaTxnAdapter
from tests.e2e.targets import E2ETarget
from tests.e2e.txn_scenario import run_consume_transform_produce

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def version_0_target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[E2ETarget]:
    with target(request, tmp_path_factory, {"transaction.version": 0}) as found:
        yield found


def test_at_transaction_version_0_the_java_client_runs_version_0(version_0_target: E2ETarget, tmp_path: Path) -> None:
    adapter = JavaTxnAdapter(version_0_target.bootstrap, tmp_path)
    try:
        run_consume_transform_produce(adapter, "java-tv0")
        sent = adapter.sent_versions()
    finally:
        adapter.close()
    assert max(sent["END_TXN"]) <= 4, sent
    assert "ADD_PARTITIONS_TO_TXN" in sent and "ADD_OFFSETS_TO_TXN" in sent, sent
    assert max(sent["TXN_OFFSET_COMMIT"]) <= 4, sent  # (Produce: the JVM's plain producer still sends v13)
