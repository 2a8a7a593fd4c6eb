"""The committed `protocol/messages/` must be exactly what `make codegen` produces from the vendored schemas."""

from __future__ import annotations

from protocol import codegen


def test_generated_messages_are_up_to_date() -> None:
    expected = codegen.generate()
    committed = {path.name: path.read_text() for path in codegen.OUTPUT_DIR.glob("*.py")}
    stale = sorted(name for name in expected.keys() | committed.keys() if expected.get(name) != committed.get(name))
    assert not stale, f"run `make codegen`: stale generated modules {stale}"


def test_every_vendored_schema_keeps_its_license_notice() -> None:
    assert (codegen.SCHEMA_DIR / "LICENSE").is_file()
    assert (codegen.SCHEMA_DIR / "NOTICE").is_file()
    for path in codegen.SCHEMA_DIR.glob("*/*.json"):
        assert "Licensed to the Apache Software Foundation" in path.read_text(), path


def test_stale_api_table_is_caught() -> None:
    # The API table is generated like the message modules, so the check above covers it too.
    assert f"{codegen.API_TABLE}.py" in codegen.generate()


def test_registry_speaks_the_ranges_the_clients_negotiate() -> None:
    # The registry is built from the generated table; these are the ranges its hand-kept predecessor listed, plus
    # the transaction APIs (#15) at every version their vendored schemas declare ("validVersions"): AddPartitionsToTxn
    # 0-5, AddOffsetsToTxn 0-4, EndTxn 0-5, WriteTxnMarkers 0-1, TxnOffsetCommit 0-4, DescribeProducers 0,
    # DescribeTransactions 0, ListTransactions 0-1. Which of them the broker advertises is its own choice.
    from protocol.registry import APIS

    ranges = {int(key): (spec.min_version, spec.max_version) for key, spec in APIS.items()}
    assert ranges == {
        0: (3, 10), 1: (4, 16), 2: (0, 8), 3: (0, 12), 8: (0, 9), 9: (0, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4),
        13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (0, 7), 20: (0, 6), 22: (0, 5),
        24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (0, 1), 28: (0, 4),
        32: (0, 4), 36: (0, 2), 37: (0, 3), 42: (0, 2), 47: (0, 0), 61: (0, 0), 65: (0, 0), 66: (0, 1),
        68: (0, 1), 69: (0, 1),
    }  # fmt: skip
    for key, spec in APIS.items():
        assert spec.key == key and spec.request.api_key == key == spec.response.api_key
