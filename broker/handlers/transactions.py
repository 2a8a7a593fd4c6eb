"""The transaction APIs (KIP-98, KIP-360, KIP-447 on the coordinator side): InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, DescribeTransactions and ListTransactions, each a thin bridge (`bridge.py`) to the sans-IO
transaction coordinator (`coordinator.transactions`). FindCoordinator for transactional ids is `groups.py`'s.

Every version Kafka 4.4 serves is served, transaction version 2's included (EndTxn v5, AddPartitionsToTxn v5; the
request's version decides which rules apply, whatever `transaction.version` the broker advertises, as in Kafka),
except InitProducerId v6 (KIP-939 two-phase commit, unstable in Kafka 4.4).
"""

from __future__ import annotations

from collections.abc import Callable

from broker.clock import BrokerClock
from broker.dispatch import Dispatcher
from broker.handlers.bridge import bridge
from coordinator.transactions import TransactionCoordinator
from protocol.registry import APIS, ApiKey

#: Highest versions served (see the module docstring); AddPartitionsToTxn v4+ is the brokers' batched form.
INIT_PRODUCER_ID_MAX = 5
END_TXN_MAX = 5
ADD_PARTITIONS_TO_TXN_MAX = 5


class TransactionHandlers:
    def __init__(self, coordinator: TransactionCoordinator, clock: BrokerClock, rearm: Callable[[], None]) -> None:
        self._coordinator = coordinator
        self._clock = clock
        self._rearm = rearm

    def register(self, d: Dispatcher) -> None:
        coordinator = self._coordinator
        for api_key, method, highest in (
            (ApiKey.INIT_PRODUCER_ID, coordinator.init_producer_id, INIT_PRODUCER_ID_MAX),
            (ApiKey.ADD_PARTITIONS_TO_TXN, coordinator.add_partitions_to_txn, ADD_PARTITIONS_TO_TXN_MAX),
            (ApiKey.ADD_OFFSETS_TO_TXN, coordinator.add_offsets_to_txn, None),
            (ApiKey.END_TXN, coordinator.end_txn, END_TXN_MAX),
            (ApiKey.DESCRIBE_TRANSACTIONS, coordinator.describe_transactions, None),
            (ApiKey.LIST_TRANSACTIONS, coordinator.list_transactions, None),
        ):
            d.register(api_key, bridge(method, self._clock, self._rearm), _versions(api_key, highest))


def _versions(api_key: ApiKey, highest: int | None) -> tuple[int, int] | None:
    if highest is None:
        return None
    return (APIS[api_key].min_version, highest)
