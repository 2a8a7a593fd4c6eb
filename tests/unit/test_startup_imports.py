"""What a broker start imports (issue #18): nothing that only a feature left unconfigured, or a tool, needs.

Checked in a fresh interpreter, as a start is; figures are not asserted, only which modules were imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import crc32c as crc32c_package

from protocol import checksum

ROOT = Path(__file__).resolve().parents[2]

#: Imported only when asked for: crc32c's package metadata lookup (protocol.checksum loads its C extension
#: alone), the ACL checks (with an authorizer), the toolkit's controls (the control API or the embedded handle) and
#: the timeline's live views (when a view is asked for), the control API's web server, client-certificate DNs and
#: Prometheus (at the first scrape).
NOT_AT_START = (
    "importlib.metadata",
    "broker.access",
    "toolkit.controls",
    "toolkit.timeline.live",
    "toolkit.control_api",
    "aiohttp",
    "cryptography",
    "prometheus_client",
)


def test_importing_the_server_leaves_out_what_serving_does_not_need() -> None:
    code = "import sys\nimport server\nprint('\\n'.join(sys.modules))"
    imported = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    assert "cli.serve" in imported
    assert [name for name in NOT_AT_START if name in imported] == []


def test_the_server_entry_point_settles_its_imports() -> None:
    """server.py turns the collector off and the dataclass code cache on for its imports (cli.startup_imports);
    `main` undoes both (what the imports made, frozen)."""
    code = (
        "import dataclasses, gc, server\n"
        "during = gc.isenabled(), hasattr(dataclasses, 'exec')\n"
        "server.main(['--override', 'nonsense=1'])\n"  # refused at once (exit 2), after the imports settled
        "print(*during, gc.isenabled(), gc.get_freeze_count() > 0, hasattr(dataclasses, 'exec'))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.split() == ["False", "True", "True", "True", "False"]


def test_the_checksum_is_the_packages_c_function() -> None:
    assert checksum.crc32c(b"123456789") == 0xE3069283  # CRC-32C's check value
    assert checksum.crc32c(b"6789", checksum.crc32c(b"12345")) == 0xE3069283
    assert checksum.crc32c is crc32c_package.crc32c  # one extension module, whoever imported it first
