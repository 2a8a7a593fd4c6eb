"""Rebuild a log's producer state and aborted-transaction indexes from its segments, and search those indexes.

Kafka loads producer state from its latest ``.snapshot`` file and replays the log from there; this broker keeps no
snapshot files and replays every batch header of the log instead (one header walk per partition and process, the
first time the state is needed; control batches are read whole, they hold one tiny record). The replay applies
what the log holds without checks, as Kafka's recovery does, so open transactions, epochs, sequences and
coordinator epochs come back exactly as they were: a transaction whose marker never made it to the log before a
crash is open again, and holds the last stable offset back until its marker is written.

The same pass yields, for each segment, the aborted transactions whose ABORT marker it holds, which is what the
segment's ``.txnindex`` must contain. A segment whose index file is trusted (it was not recovered and its file
passed the sanity check) keeps its file; any other (recovered, damaged and quarantined, or missing although the
segment holds aborts) gets the replay's entries written, with one ``txn_index.rebuilt`` line when that changed it.

A control batch whose CRC or marker does not check out is damage like any other: noted on its segment (reported
once through the log's damage hook) and skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from protocol.control_records import EndTxnMarker, decode_end_txn_marker
from protocol.errors import DecodeError
from protocol.records import NO_PRODUCER_ID, BatchHeader, read_batch_records, verify_batch_crc
from storage.producer_state import CompletedTxn, ProducerStateManager
from storage.segment import LogSegment
from storage.txn_index import AbortedTxn

__all__ = ["aborted_entry", "collect_aborted", "read_marker", "rebuild_producer_state"]

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


def rebuild_producer_state(segments: Sequence[LogSegment], partition: str) -> ProducerStateManager:
    """Replay ``segments`` (oldest first) into a fresh state; rebuild the aborted-transaction indexes that need it."""
    state = ProducerStateManager(partition)
    for segment in segments:
        aborted: list[AbortedTxn] = []
        for position, header in segment.iter_headers():
            if header.producer_id == NO_PRODUCER_ID:
                continue
            marker = None
            if header.is_control:
                marker = read_marker(segment, position, header)
                if marker is None:
                    continue
            completed = state.replay(header, marker)
            if completed is not None and completed.is_aborted:
                aborted.append(aborted_entry(completed))
        _reconcile(segment, aborted, partition)
    return state


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
