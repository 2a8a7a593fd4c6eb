"""Rebuild a log's producer state and aborted-transaction indexes from its segments, and search those indexes.

Like Kafka, the replay starts from the state of the latest usable ``.snapshot`` file (chosen by the log, see
:mod:`storage.producer_snapshot`) and walks the batch headers from its offset on, or from a fresh state and the
log start when there is none (control batches are read whole, they hold one tiny record). Batches below the log
start never reach the state (Kafka's rebuildProducerState), so a producer whose batches DeleteRecords or retention
put below it comes back only if a snapshot above the log start holds it. The replay applies what
the log holds without checks, as Kafka's recovery does, so open transactions, epochs, sequences and coordinator
epochs come back exactly as they were: a transaction whose marker never made it to the log before a crash is open
again, and holds the last stable offset back until its marker is written.

The same pass yields, for each segment it walks from its start, the aborted transactions whose ABORT marker it
holds, which is what the segment's ``.txnindex`` must contain. A segment whose index file is trusted (it was not
recovered and its file passed the sanity check) keeps its file; any other (recovered, damaged and quarantined, or
missing although the segment holds aborts) gets the replay's entries written, with one ``txn_index.rebuilt`` line
when that changed it. Every closed segment walked keeps a file, empty when it holds no abort, so that a lost file is
noticed by the log even when a snapshot would let the replay skip the segment.

A control batch whose CRC or marker does not check out is damage like any other: noted on its segment (reported
once through the log's damage hook) and skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from protocol.control_records import EndTxnMarker, decode_end_txn_marker
from protocol.errors import DecodeError
from protocol.records import NO_PRODUCER_ID, BatchHeader, read_batch_records, verify_batch_crc
from storage.producer_state import CompletedTxn, ProducerStateManager
from storage.segment import LogSegment
from storage.txn_index import AbortedTxn

__all__ = ["ReplayFrom", "aborted_entry", "collect_aborted", "read_marker", "rebuild_producer_state"]

_log = structlog.get_logger("storage")


def aborted_entry(txn: CompletedTxn) -> AbortedTxn:
    """The index entry of an aborted transaction."""
    return AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset)


def read_marker(segment: LogSegment, position: int, header: BatchHeader) -> EndTxnMarker | None:
    """The marker of the control batch at ``position``; None for an empty control batch (its transaction was
    cleaned away, Kafka ignores it) or a damaged one (noted on the segment)."""
    data = segment.read(position, header.size)
    try:
        verify_batch_crc(data, 0, header)
        records = read_batch_records(data, 0, header)
        if not records:
            return None
        return decode_end_txn_marker(records[0])
    except DecodeError as exc:
        segment.note_damage(position, position + header.size, f"control batch: {exc.reason}")
        return None


@dataclass(frozen=True, slots=True)
class ReplayFrom:
    """Where a replay into a producer state starts: ``state`` holds every batch below ``offset`` (a snapshot's
    state), or is None for a fresh state (``offset`` is then the log start, or a segment's base)."""

    offset: int
    state: ProducerStateManager | None = None


def rebuild_producer_state(
    segments: Sequence[LogSegment],
    partition: str,
    start: ReplayFrom = ReplayFrom(0),
    index_start: ReplayFrom | None = None,
) -> tuple[ProducerStateManager, int]:
    """Replay the batches of ``segments`` (oldest first) that end at or after ``start`` into its state; returns the
    state and how many batches (with a producer id) were read. Rebuilds the aborted-transaction indexes that need
    it, of the segments walked from their start.

    The state follows Kafka's rebuildProducerState, from the latest snapshot above the log start or from the log
    start itself. A segment whose index must be rebuilt may lie before that (the active segment always does: it is
    recovered at every start, while the snapshot of a clean shutdown lies at the log end), so with ``index_start``
    a scratch state is replayed from there as well, and its completed transactions fill the indexes: the log
    never starts it after the start of a segment whose index needs rebuilding."""
    state = start.state if start.state is not None else ProducerStateManager(partition)
    scratch: ProducerStateManager | None = None
    walk_from = start.offset
    if index_start is not None:
        scratch = index_start.state if index_start.state is not None else ProducerStateManager(partition)
        walk_from = min(walk_from, index_start.offset)
    indexed_from = start.offset if index_start is None else index_start.offset
    replayed = 0
    for segment in segments:
        if segment.next_offset <= walk_from:
            continue
        position_from = 0
        if segment.base_offset < walk_from:
            found = segment.find(walk_from)
            position_from = segment.size if found is None else found[0]
        aborted: list[AbortedTxn] = []
        for position, header in segment.iter_headers(position_from):
            if header.producer_id == NO_PRODUCER_ID or header.last_offset < walk_from:
                continue
            replayed += 1
            marker = None
            if header.is_control:
                marker = read_marker(segment, position, header)
                if marker is None:
                    continue
            completed = state.replay(header, marker) if header.last_offset >= start.offset else None
            if scratch is not None and index_start is not None and header.last_offset >= index_start.offset:
                completed = scratch.replay(header, marker)
            if completed is not None and completed.is_aborted:
                aborted.append(aborted_entry(completed))
        if segment.base_offset >= indexed_from:
            _reconcile(segment, aborted, partition)
        if segment is not segments[-1]:
            segment.txn_index.ensure_file()  # closed: its file must exist (see PartitionLog._txn_index_rebuild_from)
    return state, replayed


def _reconcile(segment: LogSegment, aborted: list[AbortedTxn], partition: str) -> None:
    index = segment.txn_index
    if segment.txn_index_trusted and (index.exists or not aborted):
        return
    if segment.txn_index_damage is not None:
        reason = f"damaged: {segment.txn_index_damage}"
    elif segment.txn_index_trusted:
        reason = "missing"
    else:
        reason = "segment recovered"
    changed = index.entries != aborted or (bool(aborted) and not index.exists)
    index.replace(aborted)
    segment.txn_index_trusted = True
    segment.txn_index_damage = None
    if changed:
        _log.info("txn_index.rebuilt", partition=partition, file=index.path.name, entries=len(aborted), reason=reason)


def collect_aborted(segments: Sequence[LogSegment], fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
    """Aborted transactions overlapping ``[fetch_offset, upper_bound)``, searched from the first of ``segments``
    (the one holding ``fetch_offset``) until an entry's last stable offset reaches ``upper_bound`` (Kafka's
    ``collectAbortedTransactions``)."""
    found: list[AbortedTxn] = []
    for segment in segments:
        entries, complete = segment.txn_index.collect(fetch_offset, upper_bound)
        found.extend(entries)
        if complete:
            break
    return found
