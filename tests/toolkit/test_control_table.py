"""Each control is declared once, on `BrokerControls` (issue #11): the pytest handle's methods, the control API's
routes and its route listing are derived from that declaration, and the README's tables list what the code offers.

These run without a broker: they read the declarations, the generated handle and the generated listing.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

from toolkit.control_spec import declared_controls
from toolkit.controls import BrokerControls
from toolkit.handle import GroupBrokerHandle

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_section(title: str) -> str:
    text = README.read_text()
    start = text.index(title)
    end = text.find("\n#", start + len(title))
    return text[start:end]


def test_the_handle_offers_every_control_with_its_declared_signature_and_doc() -> None:
    controls = declared_controls(BrokerControls)
    assert {c.name for c in controls} >= {
        "advance",
        "freeze_time",
        "unfreeze_time",
        "inject_error",
        "add_latency",
        "clear_faults",
        "drop_connections",
        "expire_member",
        "force_rebalance",
        "move_coordinator",
        "fail_next_offsets_append",
        "load_partition_for",
        "group",
    }
    for c in controls:
        relay = getattr(GroupBrokerHandle, c.name)
        declared = getattr(BrokerControls, c.name)
        assert inspect.signature(relay) == inspect.signature(declared), c.name
        assert relay.__doc__ == declared.__doc__ and relay.__doc__, c.name


def test_the_control_api_listing_is_the_declared_routes() -> None:
    from toolkit.control_api import endpoints

    listing = endpoints()
    for c in declared_controls(BrokerControls):
        assert any(e.method == c.method and e.path == c.path for e in listing), c.name
    lines = [e.line() for e in listing]
    assert 'POST /groups/{id}/rebalance {"reason"} start a rebalance now' in lines
    assert len({(e.method, e.path) for e in listing}) == len(listing), "a route is declared twice"


def test_the_readme_control_api_table_lists_exactly_the_routes() -> None:
    from toolkit.control_api import endpoints

    table = _readme_section("### Control API")
    documented = set()
    for row in re.findall(r"^\| (`[A-Z]+ [^|]+) \|", table, flags=re.M):
        for method, path in re.findall(r"`([A-Z]+) ([^`?]+)[^`]*`", row):
            documented.add((method, path))
    assert documented == {(e.method, e.path) for e in endpoints()}


def test_the_readme_handle_table_names_every_control() -> None:
    table = _readme_section("| handle member |")
    first_column = "".join(re.findall(r"^\| ([^|]+) \|", table, flags=re.M))
    documented = set(re.findall(r"`(?:await )?([a-z_]+)[(`]", first_column))
    assert {c.name for c in declared_controls(BrokerControls)} <= documented
    assert all(hasattr(GroupBrokerHandle, name) for name in documented), documented


def _written_as_in_the_readme(handle: type, name: str) -> str:
    """A member's signature as the README writes it: names in order, `*` before keyword-only ones, real defaults."""
    parts: list[str] = []
    for parameter in list(inspect.signature(getattr(handle, name)).parameters.values())[1:]:
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        default = "" if parameter.default is parameter.empty else f"={parameter.default!r}"
        parts.append(parameter.name + default)
    return f"{name}({', '.join(parts)})"


def test_the_readme_handle_table_writes_each_signature_as_the_handle_declares_it() -> None:
    """Issue #12: `add_latency(api=..., ms=...)` as documented raised TypeError; the table is checked against
    `inspect.signature`, so a keyword written in the README is one the handle accepts, with its real default."""
    table = _readme_section("| handle member |")
    first_column = "".join(re.findall(r"^\| ([^|]+) \|", table, flags=re.M))
    written = re.findall(r"`(?:await )?([a-z_]+\([^`]*\))`", first_column)
    assert len(written) >= 17, written
    for signature in written:
        name = signature.split("(", 1)[0]
        assert signature == _written_as_in_the_readme(GroupBrokerHandle, name), name


def test_importing_the_plugin_loads_neither_the_server_nor_its_dependencies() -> None:
    """The controls the handle is generated from are declared in a module light enough for the plugin's leaf."""
    heavy = ("broker", "coordinator", "storage", "protocol", "aiohttp", "structlog", "uvloop", "asyncio")
    code = f"import sys, toolkit.pytest_plugin\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
