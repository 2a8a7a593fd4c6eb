"""`OffsetMetadataManager`: committed offsets (Kafka's manager of the same name).

Its parts, one file each over `offset_base.py`: `offset_commit.py` OffsetCommit, `offset_fetch.py` OffsetFetch,
`offset_delete.py` OffsetDelete, `retention.py` the KIP-211 sweep. Pending transactional offsets go here next.
"""

from __future__ import annotations

from coordinator.offset_commit import OffsetCommitMixin
from coordinator.offset_delete import OffsetDeleteMixin
from coordinator.offset_fetch import OffsetFetchMixin
from coordinator.retention import RetentionMixin


class OffsetMetadataManager(OffsetCommitMixin, OffsetFetchMixin, OffsetDeleteMixin, RetentionMixin):
    """Commits, fetches, deletes and expires the offsets of the groups this coordinator owns."""
