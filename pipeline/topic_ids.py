"""Topic ids to names, from the log directory's topic catalogue (``topics.json``).

KIP-848 assignment records name topics by id only; the broker's catalogue (:mod:`storage.topics`) is where the
names are. Pure Python (no Spark), so both describe engines use it.
"""

from __future__ import annotations

from pathlib import Path

from storage.log_manager import TOPICS_FILE
from storage.topics import TopicCatalogue, kafka_uuid_to_str

__all__ = ["topic_names"]


def topic_names(data_dir: str | Path) -> dict[str, str]:
    """Topic id (as the decoded rows write it, :func:`protocol.kafka_uuid.kafka_uuid_to_str`) -> topic name."""
    catalogue = TopicCatalogue(Path(data_dir) / TOPICS_FILE).load()
    return {kafka_uuid_to_str(info.topic_id): name for name, info in catalogue.items()}
