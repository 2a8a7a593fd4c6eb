"""Where a broker key's value comes from, as Kafka resolves it: dynamic per broker, dynamic cluster default, static,
default; and the synonyms DescribeConfigs shows for it.

Kafka keeps four maps (``DynamicBrokerConfig``): the configs AlterConfigs set on this broker (resource
``"<node id>"``), those set as every broker's default (resource ``""``), the broker's properties file, and its
``ConfigDef`` defaults. A key's value is the first map that has it; its *synonyms* are the entries of every map for
the key's synonym group (``log.retention.ms`` with ``.minutes`` and ``.hours``), map by map in that order, cut so
that the list starts at the described name (Kafka's ``ConfigHelper.configSynonyms``). The first synonym is also the
key's ``config_source``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from broker.config import KEYS, BrokerConfig, ConfigKey
from storage.broker_configs import DynamicBrokerConfigs
from storage.config import TOPIC_CONFIGS
from storage.config_def import format_value, parse_value

__all__ = ["BrokerLayers", "ConfigSource", "Synonym", "default_text", "synonym_group"]


class ConfigSource(IntEnum):
    """DescribeConfigs' ``config_source`` (Kafka's ``DescribeConfigsResponse.ConfigSource``)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


@dataclass(frozen=True, slots=True)
class Synonym:
    name: str
    value: str | None
    source: ConfigSource


def _groups() -> dict[str, tuple[str, ...]]:
    """Broker keys that stand for one setting in several units (Kafka's ``brokerConfigSynonyms``): the broker
    synonyms of one topic key, e.g. ``log.retention.ms``/``.minutes``/``.hours``."""
    groups: dict[str, tuple[str, ...]] = {}
    for key in TOPIC_CONFIGS.values():
        names = tuple(s.name for s in key.synonyms)
        if len(names) > 1:
            for name in names:
                groups[name] = names
    return groups


_GROUPS = _groups()


def synonym_group(name: str) -> tuple[str, ...]:
    """The broker keys that are one setting with ``name``, finest unit first (just ``name`` for most keys)."""
    return _GROUPS.get(name, (name,))


def default_text(key: ConfigKey) -> str | None:
    """A key's default as Kafka shows it (``ConfigDef.convertToString`` of the parsed default)."""
    if key.default is None:
        return None
    value = parse_value(key.config_type, key.default, key.name) if isinstance(key.default, str) else key.default
    return format_value(key.config_type, tuple(value) if isinstance(value, list) else value)


def read_value(key: ConfigKey, text: str) -> Any:
    """A recorded value read back (it was checked when set): parsed by type only, lists as Python lists."""
    value = parse_value(key.config_type, text, key.name)
    return [item for item in value if item] if isinstance(value, tuple) else value


class BrokerLayers:
    """One snapshot of the four maps; replaced whole when AlterConfigs changes a dynamic map."""

    def __init__(self, static: BrokerConfig, dynamic: DynamicBrokerConfigs) -> None:
        self.static = static
        self.dynamic = dynamic

    @property
    def cluster(self) -> Mapping[str, str]:
        return self.dynamic.cluster

    @property
    def node(self) -> Mapping[str, str]:
        return self.dynamic.node

    def _maps(self) -> Iterator[tuple[Mapping[str, str], ConfigSource]]:
        yield self.dynamic.node, ConfigSource.DYNAMIC_BROKER_CONFIG
        yield self.dynamic.cluster, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        yield self.static.explicit, ConfigSource.STATIC_BROKER_CONFIG

    def value(self, name: str) -> Any:
        """The effective value of a known key (parsed), from the first map that has it."""
        key = KEYS[name]
        for values, source in self._maps():
            if name in values:
                return (
                    self.static[name] if source is ConfigSource.STATIC_BROKER_CONFIG else read_value(key, values[name])
                )
        return self.static[name]

    def values(self) -> dict[str, Any]:
        """Every known key's effective value (what the storage and the cleaner are configured from)."""
        return {name: self.value(name) for name in KEYS}

    def synonyms(self, name: str) -> list[Synonym]:
        """Kafka's ``configSynonyms(name, brokerConfigSynonyms(name))``: every map's entries for the group, map by
        map, dropped up to the first entry of ``name`` itself."""
        group = synonym_group(name)
        found: list[Synonym] = []
        for values, source in self._maps():
            found += [Synonym(n, values[n], source) for n in group if n in values]
        for n in group:
            text = default_text(KEYS[n]) if n in KEYS else None
            if text is not None:
                found.append(Synonym(n, text, ConfigSource.DEFAULT_CONFIG))
        for index, synonym in enumerate(found):
            if synonym.name == name:
                return found[index:]
        return []
