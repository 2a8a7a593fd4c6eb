"""The aborted-transaction index (``.txnindex``) in Kafka's file format (T40, T42)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.txn_index import AbortedTxn, TransactionIndex

#: Kafka 4.4.0's ``MessageUtil.toVersionPrefixedByteBuffer(0, AbortedTxn(1234, 10, 20, 21))``.
KAFKA_ENTRY = bytes.fromhex("000000000000000004d2000000000000000a00000000000000140000000000000015")


def test_t40_an_entry_is_kafkas_34_bytes(tmp_path: Path) -> None:
    index = TransactionIndex(tmp_path / "00000000000000000000.txnindex", 0)
    index.append(AbortedTxn(1234, 10, 20, 21))
    assert index.path.read_bytes() == KAFKA_ENTRY
    assert AbortedTxn.decode(KAFKA_ENTRY) == AbortedTxn(1234, 10, 20, 21)


def test_t40_entries_must_have_increasing_last_offsets(tmp_path: Path) -> None:
    index = TransactionIndex(tmp_path / "00000000000000000000.txnindex", 0)
    index.append(AbortedTxn(1, 0, 5, 6))
    with pytest.raises(ValueError, match="must increase"):
        index.append(AbortedTxn(2, 1, 5, 6))


def test_a_written_index_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000100.txnindex"
    index = TransactionIndex(path, 100)
    entries = [AbortedTxn(1, 90, 100, 101), AbortedTxn(2, 101, 105, 106)]
    for entry in entries:
        index.append(entry)
    loaded, damage = TransactionIndex.load(path, 100)
    assert damage is None
    assert loaded.entries == entries


def test_a_missing_file_is_an_empty_index(tmp_path: Path) -> None:
    loaded, damage = TransactionIndex.load(tmp_path / "00000000000000000000.txnindex", 0)
    assert (loaded.entries, damage, loaded.exists) == ([], None, False)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (KAFKA_ENTRY[:-1], "not a multiple"),
        (b"\x00\x01" + KAFKA_ENTRY[2:], "version"),
        (AbortedTxn(1, 0, 5, 6).encode(), "before the segment"),  # base offset 10 below
        (AbortedTxn(1, 12, 11, 13).encode(), "first offset"),
        (AbortedTxn(1, 10, 12, 13).encode() + AbortedTxn(2, 10, 12, 13).encode(), "increase"),
        (AbortedTxn(-1, 10, 12, 13).encode(), "producer id"),
    ],
)
def test_kafkas_sanity_check_and_ours_find_a_damaged_file(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "00000000000000000010.txnindex"
    path.write_bytes(data)
    loaded, damage = TransactionIndex.load(path, 10)
    assert damage is not None and reason in damage
    assert loaded.entries == []


def test_t42_collect_overlapping_entries_and_stop_at_a_complete_one(tmp_path: Path) -> None:
    index = TransactionIndex(tmp_path / "00000000000000000000.txnindex", 0)
    for entry in (AbortedTxn(1, 0, 4, 5), AbortedTxn(2, 6, 10, 11), AbortedTxn(3, 12, 20, 21)):
        index.append(entry)
    # [5, 12): the first ends before it; the second overlaps; its LSO (11) < 12 so the search goes on; the
    # third starts at the upper bound (exclusive) and does not overlap, but its LSO 21 >= 12 completes the search.
    found, complete = index.collect(5, 12)
    assert [t.producer_id for t in found] == [2] and complete
    found, complete = index.collect(0, 100)
    assert [t.producer_id for t in found] == [1, 2, 3] and not complete


def test_truncate_drops_entries_at_or_after_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.txnindex"
    index = TransactionIndex(path, 0)
    for entry in (AbortedTxn(1, 0, 4, 5), AbortedTxn(2, 6, 10, 11)):
        index.append(entry)
    index.truncate_to(10)
    assert index.entries == [AbortedTxn(1, 0, 4, 5)]
    assert TransactionIndex.load(path, 0)[0].entries == [AbortedTxn(1, 0, 4, 5)]
    index.append(AbortedTxn(3, 7, 9, 10))  # appends continue after the cut
    assert TransactionIndex.load(path, 0)[0].entries == [AbortedTxn(1, 0, 4, 5), AbortedTxn(3, 7, 9, 10)]


def test_replace_rewrites_the_file_and_an_empty_index_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.txnindex"
    index = TransactionIndex(path, 0)
    index.append(AbortedTxn(1, 0, 4, 5))
    index.replace([AbortedTxn(2, 1, 3, 4)])
    assert TransactionIndex.load(path, 0)[0].entries == [AbortedTxn(2, 1, 3, 4)]
    index.replace([])
    assert not path.exists()
