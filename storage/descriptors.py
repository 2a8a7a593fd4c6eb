"""A process-wide cap on open segment descriptors: segment files are opened on first use and the least recently
used ones are closed again once more than :data:`SEGMENT_DESCRIPTORS.limit` are open.

Why: a partition used to keep its active segment open for its whole life, so 20,000 partitions needed 20,000
descriptors, ran into ``ulimit -n`` and then refused connections. Kafka keeps every active segment open too (it
has no such bound); here descriptors are a shared budget, so the number of partitions is limited by disk, not by
the descriptor limit. The cost is a reopen (one ``open`` call) when an idle segment is used again.

Thread safety: segments are used from the event loop thread and from worker threads (the ``__consumer_offsets``
loader, the compaction cleaner). A descriptor may only be closed when no other thread can be between taking it and
using it, so eviction only closes descriptors whose last user is the evicting thread: a thread runs one segment
call at a time, and every segment of a partition is used under that partition's lock, so such a descriptor is
idle. Descriptors last used by another thread are skipped (they are evicted by that thread or once another
thread uses them again), which makes the cap a soft one: it can be exceeded by what worker threads hold.
"""

from __future__ import annotations

import os
import resource
import threading
from collections import OrderedDict
from typing import Protocol

__all__ = ["SEGMENT_DESCRIPTORS", "DescriptorCache", "default_limit"]

#: Share of the process's descriptor limit that open segment files may use; the rest is for sockets and the like.
_SHARE_OF_NOFILE = 4
_MIN_LIMIT = 16
_MAX_LIMIT = 4096


def default_limit() -> int:
    """A quarter of the soft ``RLIMIT_NOFILE`` (at least 16, at most 4096): leaves room for connections."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return _MAX_LIMIT
    return max(_MIN_LIMIT, min(_MAX_LIMIT, soft // _SHARE_OF_NOFILE))


class _Holder(Protocol):
    """What the cache needs from a segment: the file to open and a slot for the descriptor."""

    _fd: int | None

    def _open_path(self) -> str: ...


class DescriptorCache:
    """Open descriptors of segment files in least-recently-used order, at most ``limit`` (see module docstring)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"descriptor limit must be >= 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        #: holder -> thread id of its last user; the first entry is the least recently used.
        self._open: OrderedDict[_Holder, int] = OrderedDict()
        #: How many descriptors were closed to stay under the limit (for tests and diagnostics).
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._open)

    def acquire(self, holder: _Holder) -> int:
        """The holder's descriptor, opened if needed; marks it most recently used by this thread."""
        me = threading.get_ident()
        with self._lock:
            fd = holder._fd
            if fd is None:
                fd = os.open(holder._open_path(), os.O_RDWR)
                holder._fd = fd
            self._open[holder] = me
            self._open.move_to_end(holder)
            if len(self._open) > self.limit:
                self._evict(me, keep=holder)
            return fd

    def release(self, holder: _Holder) -> None:
        """Close the holder's descriptor (if open) and forget it."""
        with self._lock:
            self._open.pop(holder, None)
            fd, holder._fd = holder._fd, None
        if fd is not None:
            os.close(fd)

    def _evict(self, me: int, *, keep: _Holder) -> None:
        """Close the least recently used descriptors this thread last used, down to the limit."""
        excess = len(self._open) - self.limit
        victims = []
        for holder, user in self._open.items():
            if excess <= 0:
                break
            if user == me and holder is not keep:
                victims.append(holder)
                excess -= 1
        for holder in victims:
            del self._open[holder]
            fd, holder._fd = holder._fd, None
            if fd is not None:
                os.close(fd)
            self.evictions += 1


#: The one cache every segment of the process shares.
SEGMENT_DESCRIPTORS = DescriptorCache(default_limit())
