"""CRC-32C (Castagnoli), the checksum of Kafka's record batches: the `crc32c` package's C function.

The package's `__init__` looks its own version up with `importlib.metadata` (which imports email, zipfile and
more, and scans the distributions on sys.path) and imports its command-line tool's argparse: about a tenth of the
broker's start, for a version string nothing here reads. So the C extension is loaded on its own, by the same
machinery `import` uses, and registered under its own name, so that a later `import crc32c` (a tool, a test)
shares it. Where that is not possible (another layout of the package), the package is imported as usual.

Callers keep the package's spelling: `from protocol import checksum as crc32c`, then `crc32c.crc32c(data)`.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import cast

__all__ = ["crc32c"]

_EXTENSION = "crc32c._crc32c"


def _extension() -> ModuleType:
    """`crc32c._crc32c`, without running `crc32c/__init__.py` (already imported: that module)."""
    loaded = sys.modules.get(_EXTENSION)
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec("crc32c")  # a top-level name: located, not imported
    locations = package.submodule_search_locations if package is not None else None
    if locations:
        loader = (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES)
        spec = importlib.machinery.FileFinder(locations[0], loader).find_spec(_EXTENSION)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[_EXTENSION] = module
            return module
    import crc32c as package_module

    return package_module


#: crc32c(data: bytes-like, value: int = 0) -> int, the package's C function.
crc32c = cast(Callable[..., int], _extension().crc32c)
