"""The durable record of dynamic broker configs (``broker-configs.json`` in the log directory).

Kafka keeps the configs AlterConfigs sets on a broker resource in its KRaft metadata log: the cluster-wide defaults
(resource ``""``) and each broker's own (resource ``"<node id>"``). A single node has no metadata log, so both maps
live in one JSON file beside ``topics.json``, replaced atomically (write-temp, fsync, rename, directory fsync) on
every change, so a kill at any moment leaves either the old or the new file.

A file that does not read back refuses the start (:class:`~storage.errors.LogDirError`), as a damaged topic
catalogue does: starting on the static configuration alone would silently undo what operators set, and a shorter
static retention would then delete data the dynamic one kept. The file stays where it is for the operator to
repair or move aside; the error says which.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from storage.errors import LogDirError
from storage.files import atomic_write

__all__ = ["BROKER_CONFIGS_FILE", "BrokerConfigFile", "DynamicBrokerConfigs"]

BROKER_CONFIGS_FILE = "broker-configs.json"
_VERSION = 1


@dataclass(frozen=True, slots=True)
class DynamicBrokerConfigs:
    """What AlterConfigs set: ``cluster`` for resource ``""`` (every broker's default), ``node`` for this broker."""

    cluster: Mapping[str, str] = field(default_factory=dict)
    node: Mapping[str, str] = field(default_factory=dict)


def _string_map(value: object, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f"{what} is not a map of strings")
    return dict(value)


def _decode(text: str) -> DynamicBrokerConfigs:
    data = json.loads(text)
    version = data.get("version") if isinstance(data, dict) else None
    if version != _VERSION:
        raise ValueError(f"unsupported version {version!r}")
    return DynamicBrokerConfigs(_string_map(data["cluster"], "cluster"), _string_map(data["node"], "node"))


class BrokerConfigFile:
    """Load and atomically save ``broker-configs.json``."""

    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / BROKER_CONFIGS_FILE

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> DynamicBrokerConfigs:
        """The recorded configs; a missing file is none, a damaged one refuses the start (module docstring)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return DynamicBrokerConfigs()
        except (OSError, UnicodeDecodeError) as exc:
            raise LogDirError(self._damaged(exc)) from None
        try:
            return _decode(text)
        except (ValueError, KeyError) as exc:
            raise LogDirError(self._damaged(exc)) from None

    def _damaged(self, exc: BaseException) -> str:
        return (
            f"cannot read dynamic broker configs {self.path}: {exc}; the broker refuses to start rather than drop "
            "the configs set by AlterConfigs: repair the file, or move it aside to start on the static configuration"
        )

    def save(self, configs: DynamicBrokerConfigs) -> None:
        data = {
            "version": _VERSION,
            "cluster": dict(sorted(configs.cluster.items())),
            "node": dict(sorted(configs.node.items())),
        }
        atomic_write(self.path, (json.dumps(data, indent=2) + "\n").encode())
