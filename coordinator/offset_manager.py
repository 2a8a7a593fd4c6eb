"""`OffsetMetadataManager`: committed offsets (Kafka's manager of the same name).

Its parts, one file each over `offset_base.py`: `offset_commit.py` OffsetCommit, `offset_txn_commit.py`
TxnOffsetCommit (offsets pending in a producer's transaction), `offset_txn_marker.py` the transaction markers that
settle them, `offset_fetch.py` OffsetFetch, `offset_delete.py` OffsetDelete, `retention.py` the KIP-211 sweep.
"""

from __future__ import annotations

from coordinator.offset_commit import OffsetCommitMixin
from coordinator.offset_delete import OffsetDeleteMixin
from coordinator.offset_fetch import OffsetFetchMixin
from coordinator.offset_txn_commit import TxnOffsetCommitMixin
from coordinator.offset_txn_marker import TxnMarkerMixin
from coordinator.retention import RetentionMixin


class OffsetMetadataManager(
    OffsetCommitMixin, TxnOffsetCommitMixin, TxnMarkerMixin, OffsetFetchMixin, OffsetDeleteMixin, RetentionMixin
):
    """Commits, fetches, deletes and expires the offsets of the groups this coordinator owns, and keeps the
    offsets of open transactions until their markers."""
