"""Topic changes (creation, deletion, growth, configs), applied one at a time as Kafka's controller applies them.

Metadata's auto-creation, CreateTopics, DeleteTopics, CreatePartitions and topic config changes go through here,
so the order of changes and the `num.partitions` default are decided in one place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from broker.slices import run_in_slices
from storage.log_manager import LogManager, Steps
from storage.topics import TopicInfo


class TopicChanges:
    def __init__(self, logs: LogManager, default_partitions: int, default_replication_factor: int = 1) -> None:
        self._logs = logs
        self._default_partitions = default_partitions
        self._default_replication_factor = default_replication_factor
        #: Serialises topic creation, deletion and growth (Kafka's controller applies them one at a time).
        self._lock = asyncio.Lock()

    def _partition_count(self, partitions: int) -> int:
        return self._default_partitions if partitions == -1 else partitions

    def _factor(self, replication_factor: int) -> int:
        return self._default_replication_factor if replication_factor == -1 else replication_factor

    def create_topic(
        self, name: str, partitions: int, configs: Mapping[str, str | None], replication_factor: int = -1
    ) -> TopicInfo:
        """Auto-creation (Metadata): -1 partitions means `num.partitions`, -1 replicas the default replication
        factor, as Kafka resolves them; done in one go."""
        return self._logs.create_topic(
            name, self._partition_count(partitions), configs, replication_factor=self._factor(replication_factor)
        )

    async def create_topic_in_slices(
        self, name: str, partitions: int, configs: Mapping[str, str | None], replication_factor: int = -1
    ) -> TopicInfo:
        """CreateTopics: like `create_topic`, but the loop keeps serving requests while the partitions are made.

        Topic changes are applied one at a time, in arrival order, like Kafka's controller: a request naming a
        topic another request is still creating waits for it and then gets TOPIC_ALREADY_EXISTS. The topic is
        not visible (Metadata, Produce, Fetch) until all of its partitions exist. The name checks run at once.
        """
        steps = self._logs.create_topic_steps(
            name, self._partition_count(partitions), configs, replication_factor=self._factor(replication_factor)
        )
        return await self.in_turn(steps)

    def begin_creating(
        self, name: str, partitions: int, configs: Mapping[str, str], replication_factor: int = -1
    ) -> Steps[TopicInfo]:
        """The creation of ``name`` with its first step done; `in_turn` runs the rest, `close()` rolls it back.

        From this call on the name is being created (CreateTopics answers TOPIC_ALREADY_EXISTS, Metadata does not
        auto-create it): the broker's start takes the coordinator topics' names before its listeners serve and
        makes their partitions while they already answer. Storage errors of the first partition are raised here."""
        steps = self._logs.create_topic_steps(
            name, partitions, configs, replication_factor=self._factor(replication_factor)
        )
        next(steps)  # takes the name (and makes partition 0); the commit to the catalogue is always a later step
        return steps

    async def in_turn(self, steps: Steps[TopicInfo]) -> TopicInfo:
        """Run a topic change in slices, after the changes that came before it."""
        async with self._lock:
            return await run_in_slices(steps)

    def validate_new_topic(
        self, name: str, partitions: int, configs: Mapping[str, str | None], replication_factor: int = -1
    ) -> TopicInfo:
        """CreateTopics with validate_only: every check `create_topic` makes, nothing created."""
        return self._logs.validate_new_topic(
            name, self._partition_count(partitions), configs, replication_factor=self._factor(replication_factor)
        )

    async def delete_topic(self, name: str) -> TopicInfo:
        """DeleteTopics, in slices (see `create_topic_in_slices`); storage.log_manager orders it for a full disk."""
        return await self.in_turn(self._logs.delete_topic_steps(name))

    async def alter_configs(self, name: str, overrides: dict[str, str]) -> TopicInfo:
        """AlterConfigs of a topic (overrides already checked), in turn with the other topic changes."""
        async with self._lock:
            return self._logs.alter_topic_configs(name, overrides)

    async def add_partitions(self, name: str, total: int) -> TopicInfo:
        """CreatePartitions, in slices (see `create_topic_in_slices`)."""
        return await self.in_turn(self._logs.add_partitions_steps(name, total))
