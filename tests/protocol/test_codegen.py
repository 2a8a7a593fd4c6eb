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
    # The registry is built from the generated table: Kafka 4.4.0's validVersions, the versions Kafka 4 removed
    # (KIP-896) gone but ListOffsets v0 (protocol/schemas/legacy: Burrow 1.2.1 sends it), without an unstable newest
    # version (InitProducerId v6, KIP-939). Which of them the broker advertises is its own choice.
    from protocol.registry import APIS

    ranges = {int(key): (spec.min_version, spec.max_version) for key, spec in APIS.items()}
    assert ranges == {
        0: (3, 13), 1: (4, 18), 2: (0, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6), 11: (0, 9), 12: (0, 4),
        13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 5), 19: (2, 7), 20: (1, 6), 21: (0, 2),
        22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 6), 29: (1, 3), 30: (1, 3),
        31: (1, 3),
        32: (1, 4), 33: (0, 2), 35: (1, 5), 36: (0, 2), 37: (0, 3), 42: (0, 3), 43: (0, 2), 44: (0, 1), 45: (0, 1),
        46: (0, 0), 47: (0, 0), 50: (0, 0), 51: (0, 0), 55: (0, 2), 60: (0, 2), 61: (0, 0), 65: (0, 0), 66: (0, 2),
        68: (0, 1), 69: (0, 1), 71: (0, 0), 72: (0, 0), 74: (0, 1), 75: (0, 0),
    }  # fmt: skip
    for key, spec in APIS.items():
        assert spec.key == key and spec.request.api_key == key == spec.response.api_key
