"""All partition logs of the broker's log directory, plus the directory's identity and topic catalogue.

Kafka spreads this over the LogManager, ``meta.properties`` and the KRaft metadata log. Here:

* ``meta.properties`` (Kafka's v1 format: ``version``, ``cluster.id``, ``node.id``) gives the directory a
  stable cluster id, generated once like Kafka's ``Uuid``, so Metadata answers the same id across restarts;
* ``topics.json`` (see :mod:`storage.topics`) records topic ids, partition counts and config overrides;
* ``recovery-point-offset-checkpoint`` (Kafka's format) records how far each partition was flushed, so that
  recovery after a crash only scans what might be torn;
* one ``<topic>-<partition>`` directory per partition, a :class:`~storage.partition_log.PartitionLog`.

Only the first of ``log_dirs`` is used (JBOD is out of scope); the list keeps Kafka's ``log.dirs`` shape.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

import structlog

from storage.config import LogConfig, validate_topic_configs
from storage.damage import DamagedRange, QuarantinedFile
from storage.errors import (
    InvalidPartitionsError,
    InvalidTopicError,
    LogClosedError,
    LogDirError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from storage.files import read_offset_checkpoint, read_properties, write_offset_checkpoint, write_properties
from storage.partition_log import PartitionLog
from storage.topics import (
    TopicCatalogue,
    TopicInfo,
    kafka_uuid_to_str,
    new_kafka_uuid,
    topic_collision,
    validate_topic_name,
)

__all__ = ["LogManager", "TopicPartition", "parse_partition_dir"]

_log = structlog.get_logger("storage")

TopicPartition = tuple[str, int]

META_PROPERTIES = "meta.properties"
TOPICS_FILE = "topics.json"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
_DELETE_SUFFIX = "-delete"
_STRAY_SUFFIX = "-stray"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def parse_partition_dir(name: str) -> TopicPartition | None:
    """``<topic>-<partition>`` -> (topic, partition); None for anything else (topics may contain '-')."""
    topic, sep, partition = name.rpartition("-")
    if not sep or not partition.isdigit() or not partition.isascii():
        return None
    try:
        validate_topic_name(topic)
    except InvalidTopicError:
        return None
    return topic, int(partition)


class LogManager:
    """Owns the log directory; create, delete and look up partition logs.

    Synchronous like the logs themselves. Topic operations commit by rewriting ``topics.json`` atomically, after
    the partition directories exist (create) or before they are removed (delete): a directory the catalogue does
    not describe is left over from an interrupted operation and is set aside as ``*-stray`` at startup, never
    served and never deleted automatically.
    """

    def __init__(
        self,
        log_dirs: Sequence[Path],
        defaults: LogConfig | None = None,
        *,
        node_id: int = 0,
        cluster_id: str | None = None,
        now_ms: int | None = None,
    ) -> None:
        if not log_dirs:
            raise ValueError("at least one log directory is required")
        self.log_dir = Path(log_dirs[0])
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.defaults = defaults if defaults is not None else LogConfig()
        self.node_id = node_id
        self.cluster_id = self._load_meta(node_id, cluster_id)
        self._catalogue = TopicCatalogue(self.log_dir / TOPICS_FILE)
        self._topics = self._catalogue.load()
        self._logs: dict[TopicPartition, PartitionLog] = {}
        #: Partition directories set aside at startup (Kafka's ``-stray``), reported with the quarantined files.
        self._set_aside_dirs: list[QuarantinedFile] = []
        self._closed = False
        self._load_logs(_now_ms() if now_ms is None else now_ms)

    # --- directory identity -----------------------------------------------------------------------------------

    def _load_meta(self, node_id: int, cluster_id: str | None) -> str:
        path = self.log_dir / META_PROPERTIES
        if path.exists():
            try:
                props = read_properties(path)
            except (OSError, UnicodeDecodeError) as exc:
                raise LogDirError(f"cannot read {path}: {exc}") from None
            if props.get("version") not in ("0", "1"):
                raise LogDirError(f"{path}: unsupported version {props.get('version')!r}")
            stored_node = props.get("node.id", props.get("broker.id"))
            if stored_node is not None and stored_node != str(node_id):
                raise LogDirError(f"{path}: stored node id {stored_node} doesn't match configured node id {node_id}")
            stored_cluster = props.get("cluster.id")
            if stored_cluster:
                if cluster_id is not None and cluster_id != stored_cluster:
                    raise LogDirError(f"{path}: stored cluster id {stored_cluster} doesn't match {cluster_id}")
                return stored_cluster
        chosen = cluster_id if cluster_id is not None else kafka_uuid_to_str(new_kafka_uuid())
        values = {"version": "1", "cluster.id": chosen, "node.id": str(node_id)}
        write_properties(path, values, "Written by group-broker; identifies this log directory")
        return chosen

    # --- loading ----------------------------------------------------------------------------------------------

    def _load_logs(self, now_ms: int) -> None:
        recovery_points = read_offset_checkpoint(self.log_dir / RECOVERY_POINT_CHECKPOINT)
        for entry in sorted(os.listdir(self.log_dir)):
            path = self.log_dir / entry
            if not path.is_dir():
                continue
            if entry.endswith(_DELETE_SUFFIX):
                shutil.rmtree(path, ignore_errors=True)
                continue
            if entry.endswith(_STRAY_SUFFIX):
                continue
            tp = parse_partition_dir(entry)
            if tp is None:
                continue
            topic, partition = tp
            info = self._topics.get(topic)
            if info is None or partition >= info.partitions:
                self._set_aside(path)
                continue
            self._logs[tp] = PartitionLog(
                path, self.topic_config(topic), recovery_point=recovery_points.get(tp), now_ms=now_ms
            )
        for name, info in self._topics.items():
            for partition in range(info.partitions):
                if (name, partition) not in self._logs:
                    _log.warning("partition_dir_missing", topic=name, partition=partition)
                    self._logs[(name, partition)] = self._create_log(name, partition, self.topic_config(name), now_ms)

    def _set_aside(self, path: Path) -> None:
        stray = path.with_name(f"{path.name}.{uuid.uuid4().hex}{_STRAY_SUFFIX}")
        os.rename(path, stray)
        reason = "partition directory not in the topic catalogue"
        tp = parse_partition_dir(path.name) or (path.name, -1)
        self._set_aside_dirs.append(QuarantinedFile(tp[0], tp[1], path.name, str(stray), reason))
        _log.warning("partition_dir_not_in_catalogue", dir=str(path), moved_to=stray.name)

    # --- damaged data ---------------------------------------------------------------------------------------

    def damaged_ranges(self) -> list[DamagedRange]:
        """Every damaged range of every log (found at recovery or by readers), each once."""
        return [damage for _, log in sorted(self._logs.items()) for damage in log.damaged_ranges()]

    def quarantined_files(self) -> list[QuarantinedFile]:
        """Files recovery moved to the quarantine folder, and partition directories set aside as ``-stray``."""
        moved = [entry for _, log in sorted(self._logs.items()) for entry in log.quarantined_files()]
        return self._set_aside_dirs + moved

    def _create_log(self, topic: str, partition: int, config: LogConfig, now_ms: int) -> PartitionLog:
        path = self.log_dir / f"{topic}-{partition}"
        if path.exists():
            self._set_aside(path)
        return PartitionLog(path, config, recovery_point=0, now_ms=now_ms)

    # --- topics -----------------------------------------------------------------------------------------------

    def topic(self, name: str) -> TopicInfo | None:
        return self._topics.get(name)

    def topics(self) -> list[TopicInfo]:
        """Every topic, sorted by name."""
        return [self._topics[name] for name in sorted(self._topics)]

    def topic_config(self, name: str) -> LogConfig:
        """Effective config of a topic: broker defaults with its overrides applied."""
        info = self._topics.get(name)
        if info is None:
            raise UnknownTopicOrPartitionError(f"unknown topic {name}")
        return self.defaults.with_overrides(info.configs)

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def logs(self) -> dict[TopicPartition, PartitionLog]:
        return dict(self._logs)

    def create_topic(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str] | None = None,
        *,
        topic_id: uuid.UUID | None = None,
        now_ms: int | None = None,
    ) -> TopicInfo:
        """Create the partition logs, then commit the topic to the catalogue.

        Errors follow CreateTopics: INVALID_TOPIC_EXCEPTION (name, or a '.'/'_' collision), TOPIC_ALREADY_EXISTS,
        INVALID_PARTITIONS (< 1), INVALID_CONFIG. ``partitions=-1`` (broker default) is the caller's to resolve.
        """
        self._check_open()
        validate_topic_name(name)
        if name in self._topics:
            raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
        other = topic_collision(name, self._topics)
        if other is not None:
            raise InvalidTopicError(f"Topic '{name}' collides with existing topic: {other}")
        if partitions < 1:
            raise InvalidPartitionsError("Number of partitions was set to an invalid non-positive value.")
        overrides = validate_topic_configs(configs or {})
        config = self.defaults.with_overrides(overrides)
        info = TopicInfo(name, topic_id if topic_id is not None else new_kafka_uuid(), partitions, overrides)
        now = _now_ms() if now_ms is None else now_ms
        created = self._create_logs(name, range(partitions), config, now, {**self._topics, name: info})
        self._topics[name] = info
        self._logs.update(created)
        _log.info("topic_created", topic=name, topic_id=kafka_uuid_to_str(info.topic_id), partitions=partitions)
        return info

    def add_partitions(self, name: str, new_total: int, *, now_ms: int | None = None) -> TopicInfo:
        """CreatePartitions: grow a topic to ``new_total`` partitions (never shrink)."""
        self._check_open()
        info = self._topics.get(name)
        if info is None:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
        if new_total < info.partitions:
            raise InvalidPartitionsError(
                f"Topic currently has {info.partitions} partitions, which is higher than the requested {new_total}."
            )
        if new_total == info.partitions:
            raise InvalidPartitionsError(f"Topic already has {info.partitions} partitions.")
        grown = dataclasses.replace(info, partitions=new_total)
        now = _now_ms() if now_ms is None else now_ms
        config = self.topic_config(name)
        created = self._create_logs(name, range(info.partitions, new_total), config, now, {**self._topics, name: grown})
        self._topics[name] = grown
        self._logs.update(created)
        _log.info("partitions_added", topic=name, partitions=new_total)
        return grown

    def _create_logs(
        self,
        name: str,
        partitions: range,
        config: LogConfig,
        now_ms: int,
        catalogue: Mapping[str, TopicInfo],
    ) -> dict[TopicPartition, PartitionLog]:
        """Create logs, then commit ``catalogue``; on any failure remove what was created and re-raise."""
        created: dict[TopicPartition, PartitionLog] = {}
        try:
            for partition in partitions:
                created[(name, partition)] = self._create_log(name, partition, config, now_ms)
            self._catalogue.save(catalogue)
        except BaseException:
            for log in created.values():
                log.delete()
            raise
        return created

    def delete_topic(self, name: str) -> TopicInfo:
        """Commit the removal to the catalogue, then close and delete the partition directories."""
        self._check_open()
        info = self._topics.get(name)
        if info is None:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
        remaining = {n: t for n, t in self._topics.items() if n != name}
        self._catalogue.save(remaining)
        self._topics = remaining
        for partition in range(info.partitions):
            log = self._logs.pop((name, partition), None)
            if log is not None:
                log.close()
            path = self.log_dir / f"{name}-{partition}"
            if path.exists():
                # Renamed first so a crash mid-delete leaves a directory that startup removes, not a stray.
                doomed = path.with_name(f"{path.name}.{uuid.uuid4().hex}{_DELETE_SUFFIX}")
                os.rename(path, doomed)
                shutil.rmtree(doomed, ignore_errors=True)
        _log.info("topic_deleted", topic=name)
        return info

    # --- housekeeping -----------------------------------------------------------------------------------------

    def apply_retention(self, now_ms: int) -> int:
        """Run retention on every log; returns the number of segments deleted."""
        self._check_open()
        return sum(log.apply_retention(now_ms) for log in self._logs.values())

    def flush_due(self, now_ms: int) -> int:
        """Flush logs whose ``flush.ms`` has elapsed; returns how many flushed."""
        self._check_open()
        return sum(1 for log in self._logs.values() if log.flush_if_due(now_ms))

    def flush_all(self) -> None:
        """fsync every log, then checkpoint the recovery points so the next start scans little."""
        self._check_open()
        for log in self._logs.values():
            log.flush()
        self.checkpoint()

    def checkpoint(self) -> None:
        """Persist each log's recovery point (the offset up to which it was flushed)."""
        points = {tp: log.recovery_point for tp, log in self._logs.items()}
        write_offset_checkpoint(self.log_dir / RECOVERY_POINT_CHECKPOINT, points)

    def close(self) -> None:
        """Clean shutdown: flush everything, checkpoint, close every log."""
        if self._closed:
            return
        self.flush_all()
        for log in self._logs.values():
            log.close()
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosedError("log manager is closed")
