"""The entries DescribeConfigs lists for a topic or a broker resource, as Kafka 4.4 computes them
(``ConfigHelper.createTopicConfigEntry`` / ``createBrokerConfigEntry``); CreateTopics v5+ echoes the topic ones.

A topic lists every topic-level key (Kafka's internal ones only where the topic sets them): the override when the
topic has one (DYNAMIC_TOPIC_CONFIG), else the default its broker keys give it, with the synonyms of its primary
broker key. A broker resource ``"<id>"`` lists every broker key with its effective value; the resource ``""`` lists
only the cluster-wide dynamic defaults. Keys whose type is unknown (a dynamic key this broker does not know) are
sensitive and shown without a value, as Kafka shows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from broker.config import KEYS
from broker.config_layers import BrokerLayers, ConfigSource, Synonym
from storage.config import TOPIC_CONFIGS
from storage.config_def import ConfigType, format_value
from storage.topics import TopicInfo

__all__ = ["Entry", "broker_entries", "cluster_default_entries", "topic_entries"]


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    value: str | None
    source: ConfigSource
    read_only: bool
    sensitive: bool
    synonyms: tuple[Synonym, ...]
    config_type: ConfigType
    doc: str | None


def _source(synonyms: Iterable[Synonym]) -> ConfigSource:
    first = next(iter(synonyms), None)
    return ConfigSource.DEFAULT_CONFIG if first is None else first.source


def topic_entries(info: TopicInfo, layers: BrokerLayers, defaults: Mapping[str, str]) -> list[Entry]:
    """Every topic key of ``info`` with its value; ``defaults`` are the topic keys' broker defaults as text."""
    entries = []
    for name, key in TOPIC_CONFIGS.items():
        override = info.configs.get(name)
        if key.internal and override is None:
            continue
        synonyms = [] if override is None else [Synonym(name, override, ConfigSource.DYNAMIC_TOPIC_CONFIG)]
        if key.synonyms:
            synonyms += layers.synonyms(key.synonyms[0].name)
        value = override if override is not None else defaults[name]
        entries.append(Entry(name, value, _source(synonyms), False, key.sensitive, tuple(synonyms), key.type, key.doc))
    return entries


def _hidden(synonyms: Iterable[Synonym]) -> tuple[Synonym, ...]:
    """Synonyms of a sensitive key, their values withheld as Kafka withholds them."""
    return tuple(Synonym(s.name, None, s.source) for s in synonyms)


def _unknown(name: str, synonyms: list[Synonym]) -> Entry:
    """A dynamic key this broker does not know: Kafka treats an unknown type as sensitive (no value shown)."""
    hidden = _hidden(synonyms)
    return Entry(name, None, _source(hidden), True, True, hidden, ConfigType.UNKNOWN, None)


def broker_entries(layers: BrokerLayers) -> list[Entry]:
    """Resource ``"<node id>"``: every broker key with its effective value, then unknown dynamic keys."""
    entries = []
    for name, key in KEYS.items():
        value = layers.value(name)
        text = (
            None if key.sensitive else format_value(key.config_type, tuple(value) if isinstance(value, list) else value)
        )
        synonyms = _hidden(layers.synonyms(name)) if key.sensitive else tuple(layers.synonyms(name))
        entries.append(
            Entry(name, text, _source(synonyms), not key.alterable, key.sensitive, synonyms, key.config_type, key.doc)
        )
    entries.extend(
        _unknown(name, layers.synonyms(name)) for name in sorted({*layers.node, *layers.cluster} - KEYS.keys())
    )
    return entries


def cluster_default_entries(layers: BrokerLayers) -> list[Entry]:
    """Resource ``""``: the cluster-wide dynamic defaults only, each with its cluster-level synonyms only."""
    entries = []
    for name, text in sorted(layers.cluster.items()):
        synonyms = [s for s in layers.synonyms(name) if s.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        key = KEYS.get(name)
        if key is None:
            entries.append(_unknown(name, synonyms))
            continue
        shown, hidden = (None, _hidden(synonyms)) if key.sensitive else (text, tuple(synonyms))
        entries.append(
            Entry(name, shown, _source(hidden), not key.alterable, key.sensitive, hidden, key.config_type, key.doc)
        )
    return entries
