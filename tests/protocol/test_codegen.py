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
