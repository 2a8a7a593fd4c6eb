"""The feature levels ApiVersions v3+ reports (KIP-584): what this broker supports and what it runs at.

Kafka's KRaft controller finalizes feature levels cluster-wide; a single group-broker node has one feature that
changes what clients do: `transaction.version` (KIP-890). Kafka 4.4 supports levels 0-2 and finalizes 2 on a new
cluster; at 2 a Kafka 4 client bumps the producer epoch at every EndTxn (v5) and lets Produce v12 and TxnOffsetCommit
v5 add partitions to its transaction, at 0 or 1 it sends AddPartitionsToTxn/AddOffsetsToTxn and EndTxn v4 as before.
The broker setting `transaction.version` picks the level (Kafka: `kafka-storage format --feature` or
`kafka-features.sh`), so version 0/1 stays testable end to end. A level of 0 is not listed as finalized, as Kafka
drops disabled features from the finalized set. Before ApiVersions v4, supported ranges starting at 0 are left out
(Kafka 4 does, for older clients that refuse them); the finalized level is listed at every version from v3.

The finalized-features epoch is Kafka's metadata offset of the last feature change; a node without a metadata log
reports 0 when it finalizes anything (a client only takes features from an answer whose epoch is above -1, the one
it starts with) and -1 otherwise, Kafka's "no finalized features".
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.config import TRANSACTION_VERSION_MAX
from protocol.messages.api_versions import FinalizedFeatureKey, SupportedFeatureKey

TRANSACTION_VERSION = "transaction.version"
#: The first ApiVersions version whose answer lists supported features with a minimum of 0.
ZERO_MIN_SINCE = 4
NO_EPOCH = -1
EPOCH = 0


@dataclass(frozen=True, slots=True)
class FeatureLevels:
    """Supported ranges and finalized levels by feature name."""

    supported: tuple[tuple[str, int, int], ...] = ()
    finalized: tuple[tuple[str, int], ...] = ()

    @classmethod
    def for_transactions(cls, transaction_version: int) -> FeatureLevels:
        """This broker's features when it runs at `transaction_version`."""
        finalized = ((TRANSACTION_VERSION, transaction_version),) if transaction_version > 0 else ()
        return cls(supported=((TRANSACTION_VERSION, 0, TRANSACTION_VERSION_MAX),), finalized=finalized)

    @property
    def epoch(self) -> int:
        return EPOCH if self.finalized else NO_EPOCH

    def supported_keys(self, api_version: int) -> list[SupportedFeatureKey]:
        """Before ApiVersions v4 a feature whose range starts at 0 is left out, as Kafka 4 does (KAFKA-17011: older
        clients refuse a supported range starting at 0), so v3 lists no `transaction.version` as supported."""
        return [
            SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
            for n, lo, hi in self.supported
            if lo > 0 or api_version >= ZERO_MIN_SINCE
        ]

    def finalized_keys(self) -> list[FinalizedFeatureKey]:
        return [FinalizedFeatureKey(name=n, min_version_level=v, max_version_level=v) for n, v in self.finalized]


NO_FEATURES = FeatureLevels()
