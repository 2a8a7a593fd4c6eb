"""The README's API table is generated from the code (`python -m broker.api_table`), and every advertised
(api, version) is one the codec round-trips."""

from __future__ import annotations

from pathlib import Path

from broker.api_table import markdown_table, served_ranges
from protocol.registry import APIS
from tests.protocol import test_roundtrip


def test_readme_api_table_is_generated_from_the_registry_and_the_dispatcher() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert markdown_table() in readme, "regenerate with: .venv/bin/python -m broker.api_table"


def test_every_advertised_version_is_one_the_codec_round_trips() -> None:
    """Advertised = registered (broker.dispatch); each such (api, version) is among the pairs whose requests and
    responses tests/protocol/test_roundtrip.py encodes and decodes back (with the generated declarations), so a
    client can never negotiate a version the codec would fail on."""
    advertised = {(key, v) for key, (lo, hi) in served_ranges().items() for v in range(lo, hi + 1)}
    assert advertised, "the broker serves nothing?"
    assert advertised <= set(test_roundtrip.PAIRS), sorted(advertised - set(test_roundtrip.PAIRS))
    assert set(test_roundtrip.PAIRS) == {
        (k, v) for k, s in APIS.items() for v in range(s.min_version, s.max_version + 1)
    }


def test_the_table_marks_what_the_codec_speaks_but_the_broker_does_not_serve() -> None:
    table = markdown_table({0: (3, 11)})
    assert "| Produce | 0 | 3-13 | 3-11 |" in table
    assert "| Fetch | 1 | 4-18 | - |" in table
