"""Per-version error remapping at the API boundary (T17), and the transaction version a request's version implies
(T70).

PRODUCER_FENCED (90) was added to InitProducerId in v4 and to AddPartitionsToTxn, AddOffsetsToTxn and EndTxn in
v2; older clients do not know it and get INVALID_PRODUCER_EPOCH (47), which they treat the same way (KafkaApis'
response callbacks). The coordinator's responses already apply this; the broker may use it for responses it
builds itself.
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from protocol.messages.api_table import ApiKey

PRODUCER_FENCED_SINCE: dict[ApiKey, int] = {
    ApiKey.INIT_PRODUCER_ID: 4,
    ApiKey.ADD_PARTITIONS_TO_TXN: 2,
    ApiKey.ADD_OFFSETS_TO_TXN: 2,
    ApiKey.END_TXN: 2,
}


def for_version(api_key: ApiKey, version: int, error: ErrorCode) -> ErrorCode:
    """The error a request of `api_key` at `version` answers for `error`."""
    since = PRODUCER_FENCED_SINCE.get(api_key)
    if error == ErrorCode.PRODUCER_FENCED and since is not None and version < since:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error


#: The first version of each API whose client runs transaction version 2 (Kafka's `TransactionVersion
#: .transactionVersionForEndTxn` / `transactionVersionForAddPartitionsToTxn`: EndTxn > 4, AddPartitionsToTxn > 3).
TRANSACTION_VERSION_2_SINCE: dict[ApiKey, int] = {ApiKey.END_TXN: 5, ApiKey.ADD_PARTITIONS_TO_TXN: 4}


def transaction_version_for(api_key: ApiKey, version: int) -> int:
    """The client transaction version (0 or 2) a request of `api_key` at `version` is handled under."""
    since = TRANSACTION_VERSION_2_SINCE.get(api_key)
    return 2 if since is not None and version >= since else 0
