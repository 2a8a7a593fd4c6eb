"""DescribeTransactions and ListTransactions (Kafka's `handleDescribeTransactions` and
`TransactionStateManager.listTransactionStates`, T67, T68).

Both show the *current* state (not a pending one) and treat Dead as gone. DescribeTransactions answers per id:
COORDINATOR_NOT_AVAILABLE once shut down, INVALID_REQUEST for "", the coordinator's lookup error,
TRANSACTIONAL_ID_NOT_FOUND for an unknown id. ListTransactions covers the loaded partitions of this coordinator:
COORDINATOR_LOAD_IN_PROGRESS (and nothing else) while any partition loads; filters are AND-ed, empty means all:
producer ids, state names (names that match no state are echoed back and filter nothing), and (v1) a duration:
only transactions running for longer than it, measured as `now - start` (an id without a transaction has start -1,
so Kafka keeps it: reproduced), and (v2, KIP-1152) a transactional id pattern: an RE2/J regular expression that
must match the whole id (null or empty: no filter; one RE2/J refuses: INVALID_REGULAR_EXPRESSION, the same dialect
KIP-848 regex subscriptions compile in). Results are sorted by transactional id (Kafka's order is a hash map's).
In a several-node cluster both answer as the asking node (`serves`): NOT_COORDINATOR for an id of a partition it
does not lead, and a listing of its own partitions only.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

from coordinator.consumer_group.re2j_syntax import compile_re2j
from coordinator.partitions import Serves
from coordinator.transactions.cache import TransactionCache
from coordinator.transactions.metadata import TransactionMetadata
from coordinator.transactions.state import TransactionState
from protocol.errors import ErrorCode
from protocol.messages.describe_transactions import TopicData
from protocol.messages.describe_transactions import TransactionState as DescribedTransaction
from protocol.messages.list_transactions import ListTransactionsResponse
from protocol.messages.list_transactions import TransactionState as ListedTransaction


def describe(cache: TransactionCache, transactional_id: str, serves: Serves | None = None) -> DescribedTransaction:
    if not cache.active:
        return DescribedTransaction(transactional_id=transactional_id, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
    if not transactional_id:
        return DescribedTransaction(transactional_id=transactional_id, error_code=ErrorCode.INVALID_REQUEST)
    found = cache.lookup(transactional_id, serves)
    if isinstance(found, ErrorCode):
        return DescribedTransaction(transactional_id=transactional_id, error_code=found)
    if found is None or found.state is TransactionState.DEAD:
        return DescribedTransaction(transactional_id=transactional_id, error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    return DescribedTransaction(
        error_code=ErrorCode.NONE,
        transactional_id=transactional_id,
        transaction_state=found.state.state_name,
        transaction_timeout_ms=found.timeout_ms,
        transaction_start_time_ms=found.start_timestamp_ms,
        producer_id=found.producer_id,
        producer_epoch=found.producer_epoch,
        topics=[
            TopicData(topic=topic, partitions=[p for _, p in group])
            for topic, group in groupby(sorted(found.partitions), key=lambda tp: tp[0])
        ],
    )


def list_transactions(
    cache: TransactionCache,
    state_filters: Iterable[str],
    producer_id_filters: Iterable[int],
    duration_ms: int,
    now_ms: int,
    id_pattern: str | None = None,
    serves: Serves | None = None,
) -> ListTransactionsResponse:
    """`serves`: the asking node's; only its partitions are listed, and only their loading counts."""
    if not cache.active:
        return ListTransactionsResponse(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
    if cache.any_loading(serves):
        return ListTransactionsResponse(error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    matcher = compile_re2j(id_pattern) if id_pattern else None
    if isinstance(matcher, str):
        return ListTransactionsResponse(error_code=ErrorCode.INVALID_REGULAR_EXPRESSION)
    states: set[TransactionState] = set()
    unknown: list[str] = []
    for name in state_filters:
        state = TransactionState.from_name(name)
        if state is None:
            unknown.append(name)
        else:
            states.add(state)
    producer_ids = set(producer_id_filters)

    def included(txn: TransactionMetadata) -> bool:
        return (
            txn.state is not TransactionState.DEAD
            and (not producer_ids or txn.producer_id in producer_ids)
            and (not states or txn.state in states)
            and (duration_ms < 0 or now_ms - txn.start_timestamp_ms > duration_ms)
            and (matcher is None or matcher.fullmatch(txn.transactional_id) is not None)
        )

    listed = sorted((t for t in cache.all_transactions(serves) if included(t)), key=lambda t: t.transactional_id)
    return ListTransactionsResponse(
        error_code=ErrorCode.NONE,
        unknown_state_filters=unknown,
        transaction_states=[
            ListedTransaction(
                transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state.state_name
            )
            for t in listed
        ],
    )
