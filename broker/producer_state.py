"""Producer ids that stay unique across restarts (InitProducerId).

The per-partition producer state (epochs, sequences, retried batches, open transactions) lives with each
partition's log, where every append goes through it: :mod:`storage.producer_state`.
"""

from __future__ import annotations

import os
from pathlib import Path

ID_BLOCK_SIZE = 1000


class ProducerIdAllocator:
    """Hands out producer ids that stay unique across restarts: blocks are reserved on disk before use."""

    def __init__(self, path: Path) -> None:
        self._path = path
        reserved = int(path.read_text()) if path.exists() else 0
        self._next = reserved
        self._limit = reserved

    def allocate(self) -> int:
        if self._next >= self._limit:
            self._limit = self._next + ID_BLOCK_SIZE
            temp = self._path.with_suffix(".tmp")
            temp.write_text(str(self._limit))
            with temp.open("rb") as handle:
                os.fsync(handle.fileno())
            temp.replace(self._path)
        producer_id = self._next
        self._next += 1
        return producer_id
