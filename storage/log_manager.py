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

import contextlib
import dataclasses
import os
import shutil
import uuid
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar, cast

import structlog

from storage.clock import Clock, wall_clock_ms
from storage.config import LogConfig, validate_topic_configs
from storage.damage import DamagedRange, QuarantinedFile
from storage.errors import (
    InvalidPartitionsError,
    InvalidTopicError,
    KafkaStorageError,
    LogClosedError,
    LogDirError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
    os_error_fields,
)
from storage.files import fsync_dir, read_offset_checkpoint, read_properties, write_offset_checkpoint, write_properties
from storage.partition_log import PartitionLog
from storage.topics import (
    TopicCatalogue,
    TopicInfo,
    capped_dir_name,
    kafka_uuid_to_str,
    new_kafka_uuid,
    parse_capped_dir_name,
    topic_collision,
    validate_topic_name,
)

__all__ = ["LogManager", "Steps", "TopicPartition", "parse_partition_dir", "run_steps"]

_log = structlog.get_logger("storage")

#: What a flush or checkpoint that fails at shutdown costs (said in its log line, so nobody restores a backup).
_NOT_DURABLE_AT_SHUTDOWN = (
    "nothing acknowledged is lost (it was written to the OS before it was acknowledged); the recovery points stay "
    "older, so the next start scans more of the logs"
)

TopicPartition = tuple[str, int]

META_PROPERTIES = "meta.properties"
TOPICS_FILE = "topics.json"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
_DELETE_SUFFIX = "-delete"
_STRAY_SUFFIX = "-stray"


_T = TypeVar("_T")
#: A topic operation done in small steps: each ``next()`` does a bounded piece of work (one partition), the
#: generator's return value is the result. The broker runs it in slices between other work on its event loop.
Steps = Generator[None, None, _T]


def run_steps(steps: Steps[_T]) -> _T:
    """Run a stepwise operation to its end."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return cast(_T, stop.value)


def _empty_dir(path: Path) -> None:
    """Remove everything inside ``path`` but keep the directory (its name still proves what it was)."""
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)


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
        clock: Clock = wall_clock_ms,
        default_properties: Mapping[str, str] | None = None,
    ) -> None:
        """``default_properties`` are the topic keys' broker defaults as text (what a new topic's overrides are
        checked against: Kafka refuses a min.compaction.lag.ms above the merged max.compaction.lag.ms); Kafka's own
        defaults when None."""
        if not log_dirs:
            raise ValueError("at least one log directory is required")
        self.log_dir = Path(log_dirs[0])
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.defaults = defaults if defaults is not None else LogConfig()
        self.default_properties = dict(default_properties) if default_properties is not None else None
        self.node_id = node_id
        self.cluster_id = self._load_meta(node_id, cluster_id)
        self._catalogue = TopicCatalogue(self.log_dir / TOPICS_FILE)
        self._topics = self._catalogue.load()
        #: Moves on every topic creation, deletion or growth (the group coordinator's cue to re-read metadata).
        self.topics_version = 0
        self._logs: dict[TopicPartition, PartitionLog] = {}
        #: Topics being deleted whose deletion has not reached its commit point: not served, still catalogued.
        self._hidden: dict[str, TopicInfo] = {}
        #: Names with a create or delete in progress, and why (the TOPIC_ALREADY_EXISTS message).
        self._pending: dict[str, str] = {}
        #: Partition directories set aside at startup (Kafka's ``-stray``), reported with the quarantined files.
        self._set_aside_dirs: list[QuarantinedFile] = []
        self._closed = False
        #: Where every log of this directory takes the time when a caller passes none (:mod:`storage.clock`).
        self._clock = clock
        self._finish_deletions()
        self._load_logs(clock() if now_ms is None else now_ms)

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
                path, self.topic_config(topic), recovery_point=recovery_points.get(tp), now_ms=now_ms, clock=self._clock
            )
        for name, info in self._topics.items():
            for partition in range(info.partitions):
                if (name, partition) not in self._logs:
                    _log.warning("partition_dir_missing", topic=name, partition=partition)
                    self._logs[(name, partition)] = self._create_log(name, partition, self.topic_config(name), now_ms)

    def _set_aside(self, path: Path) -> None:
        """Rename a partition directory the catalogue does not describe to Kafka's ``-stray`` name (capped like the
        ``-delete`` names, so a 249-character topic's directory can be set aside too); never deleted."""
        tp = parse_partition_dir(path.name)
        assert tp is not None, f"{path.name} is not a partition directory"
        stray = path.with_name(capped_dir_name(tp[0], tp[1], uuid.uuid4(), _STRAY_SUFFIX))
        os.rename(path, stray)
        reason = "partition directory not in the topic catalogue"
        self._set_aside_dirs.append(QuarantinedFile(tp[0], tp[1], path.name, str(stray), reason))
        _log.warning("partition_dir_not_in_catalogue", dir=str(path), moved_to=stray.name)

    # --- damaged data ---------------------------------------------------------------------------------------

    def damaged_ranges(self) -> list[DamagedRange]:
        """Every damaged range of every log (found at recovery or by readers), each once."""
        return [damage for _, log in sorted(self._logs.items()) for damage in log.damaged_ranges()]

    def note_quarantined(self, moved: QuarantinedFile) -> None:
        """A broker-wide file of this log dir quarantined by its owner (the SCRAM credential store): reported with
        the rest, so the storage status shows every move."""
        self._set_aside_dirs.append(moved)

    def quarantined_files(self) -> list[QuarantinedFile]:
        """Files recovery moved to the quarantine folder, partition directories set aside as ``-stray``, and
        broker-wide files their owners quarantined (:meth:`note_quarantined`)."""
        moved = [entry for _, log in sorted(self._logs.items()) for entry in log.quarantined_files()]
        return self._set_aside_dirs + moved

    def _create_log(self, topic: str, partition: int, config: LogConfig, now_ms: int) -> PartitionLog:
        path = self.log_dir / f"{topic}-{partition}"
        if path.exists():
            self._set_aside(path)
        return PartitionLog(path, config, recovery_point=0, now_ms=now_ms, clock=self._clock)

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
        return self.defaults.with_overrides(info.configs, validated=True)

    def set_defaults(self, defaults: LogConfig, properties: Mapping[str, str] | None = None) -> None:
        """New broker defaults (a dynamic ``log.*`` config changed): every log follows them at once, except in the
        keys its topic overrides. ``properties`` as in the constructor."""
        self.defaults = defaults
        if properties is not None:
            self.default_properties = dict(properties)
        for (topic, _), log in self._logs.items():
            log.update_config(self.topic_config(topic))

    def alter_topic_configs(self, name: str, overrides: Mapping[str, str]) -> TopicInfo:
        """Replace a topic's overrides with ``overrides`` (already validated): committed to ``topics.json`` first,
        then applied to its logs, so a crash leaves either the old or the new set, and a failed write changes
        nothing. The logs take the change from their next append, roll, retention or cleaner pass."""
        self._check_open()
        info = self._topics.get(name)
        if info is None:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
        altered = dataclasses.replace(info, configs=dict(overrides))
        try:
            self._catalogue.save({**self._catalogue_topics(), name: altered})
        except OSError as exc:
            raise LogDirError(f"cannot record the configs of topic {name}: {exc}") from exc
        self._topics[name] = altered
        config = self.topic_config(name)
        for partition in range(altered.partitions):
            log = self._logs.get((name, partition))
            if log is not None:
                log.update_config(config)
        _log.info("topic_configs_altered", topic=name, configs=dict(sorted(altered.configs.items())))
        return altered

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def logs(self) -> dict[TopicPartition, PartitionLog]:
        return dict(self._logs)

    def create_topic(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str | None] | None = None,
        *,
        topic_id: uuid.UUID | None = None,
        now_ms: int | None = None,
        replication_factor: int = 1,
    ) -> TopicInfo:
        """:meth:`create_topic_steps` run to its end in one go (startup, tools, small topics)."""
        return run_steps(
            self.create_topic_steps(
                name, partitions, configs, topic_id=topic_id, now_ms=now_ms, replication_factor=replication_factor
            )
        )

    def create_topic_steps(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str | None] | None = None,
        *,
        topic_id: uuid.UUID | None = None,
        now_ms: int | None = None,
        replication_factor: int = 1,
    ) -> Steps[TopicInfo]:
        """Create the partition logs one step per partition, then commit the topic to the catalogue.

        Errors follow CreateTopics: INVALID_TOPIC_EXCEPTION (name, or a '.'/'_' collision), TOPIC_ALREADY_EXISTS
        (also while the name is being created or deleted), INVALID_PARTITIONS (< 1), INVALID_CONFIG, and
        KAFKA_STORAGE_ERROR when the disk refuses. The checks run before the first step. Until the commit the
        topic is invisible (not in :meth:`topic`/:meth:`topics`); a failure or an abandoned generator removes
        every directory and descriptor it made. ``partitions=-1`` (broker default) is the caller's to resolve.
        """
        self._check_open()
        info = self.validate_new_topic(
            name, partitions, configs, topic_id=topic_id, replication_factor=replication_factor
        )
        now = self._clock() if now_ms is None else now_ms
        return self._create_topic(info, self.defaults.with_overrides(info.configs, validated=True), now)

    def validate_new_topic(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str | None] | None = None,
        *,
        topic_id: uuid.UUID | None = None,
        replication_factor: int = 1,
    ) -> TopicInfo:
        """Every check :meth:`create_topic_steps` makes (CreateTopics' validate_only); nothing is created. The
        replication factor is the caller's to check against the nodes (CreateTopics does)."""
        validate_topic_name(name)
        self._check_name_free(name)
        if partitions < 1:
            raise InvalidPartitionsError("Number of partitions was set to an invalid non-positive value.")
        overrides = validate_topic_configs(configs or {}, self.default_properties)
        topic_id = topic_id if topic_id is not None else new_kafka_uuid()
        return TopicInfo(name, topic_id, partitions, overrides, replication_factor)

    def _create_topic(self, info: TopicInfo, config: LogConfig, now_ms: int) -> Steps[TopicInfo]:
        self._pending[info.name] = "is being created"
        try:
            created = yield from self._create_logs(info, range(info.partitions), config, now_ms)
        finally:
            del self._pending[info.name]
        self._topics[info.name] = info
        self.topics_version += 1
        self._logs.update(created)
        _log.info(
            "topic_created", topic=info.name, topic_id=kafka_uuid_to_str(info.topic_id), partitions=info.partitions
        )
        return info

    def add_partitions(self, name: str, new_total: int, *, now_ms: int | None = None) -> TopicInfo:
        """:meth:`add_partitions_steps` run to its end in one go."""
        return run_steps(self.add_partitions_steps(name, new_total, now_ms=now_ms))

    def add_partitions_steps(self, name: str, new_total: int, *, now_ms: int | None = None) -> Steps[TopicInfo]:
        """CreatePartitions: grow a topic to ``new_total`` partitions (never shrink), one step per new partition.

        The new partitions appear together, when the catalogue records them; a failure removes them all.
        """
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
        now = self._clock() if now_ms is None else now_ms
        return self._add_partitions(info, new_total, self.topic_config(name), now)

    def _add_partitions(self, info: TopicInfo, new_total: int, config: LogConfig, now_ms: int) -> Steps[TopicInfo]:
        grown = dataclasses.replace(info, partitions=new_total)
        created = yield from self._create_logs(grown, range(info.partitions, new_total), config, now_ms, info)
        self._topics[info.name] = grown
        self.topics_version += 1
        self._logs.update(created)
        _log.info("partitions_added", topic=info.name, partitions=new_total)
        return grown

    def _check_name_free(self, name: str) -> None:
        if name in self._topics:
            raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
        if name in self._pending:
            raise TopicAlreadyExistsError(f"Topic '{name}' {self._pending[name]}.")
        other = topic_collision(name, [*self._topics, *self._pending])
        if other is not None:
            raise InvalidTopicError(f"Topic '{name}' collides with existing topic: {other}")

    def _create_logs(
        self,
        info: TopicInfo,
        partitions: range,
        config: LogConfig,
        now_ms: int,
        replaces: TopicInfo | None = None,
    ) -> Steps[dict[TopicPartition, PartitionLog]]:
        """Create logs (one step each), then commit ``info`` to the catalogue.

        On any failure, or when the generator is abandoned, everything created is removed again (directories and
        descriptors) before the error propagates; an OSError becomes KAFKA_STORAGE_ERROR. ``replaces`` is the
        catalogue entry ``info`` supersedes (a grown topic); if it changed meanwhile nothing is committed.
        """
        created: dict[TopicPartition, PartitionLog] = {}
        try:
            for partition in partitions:
                existed = (self.log_dir / f"{info.name}-{partition}").exists()
                try:
                    created[(info.name, partition)] = self._create_log(info.name, partition, config, now_ms)
                except BaseException:
                    if not existed:  # half made (a directory without its segment) and certainly ours
                        self._discard_dir(info.name, partition, info.topic_id)
                    raise
                yield
            self._check_unchanged(info.name, replaces)
            self._catalogue.save({**self._catalogue_topics(), info.name: info})
        except GeneratorExit:
            for (_, partition), log in created.items():
                self._discard_log(log, info.name, partition, info.topic_id)
            raise
        except BaseException as exc:
            for (_, partition), log in created.items():
                self._discard_log(log, info.name, partition, info.topic_id)
                yield
            _log.warning("topic_creation_rolled_back", topic=info.name, partitions=len(created), error=str(exc))
            if isinstance(exc, OSError):
                raise LogDirError(f"cannot create topic {info.name}: {exc}") from exc
            raise
        return created

    def _check_unchanged(self, name: str, expected: TopicInfo | None) -> None:
        if self._topics.get(name) is not expected:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' changed while partitions were added.")

    def _discard_log(self, log: PartitionLog, topic: str, partition: int, topic_id: uuid.UUID) -> None:
        """Close a log that never became visible and remove its directory (rolled back creation)."""
        log.close()
        self._discard_dir(topic, partition, topic_id)

    def _discard_dir(self, topic: str, partition: int, topic_id: uuid.UUID) -> None:
        """Rename to a ``-delete`` name (proven garbage if we crash now), then remove."""
        path = self.log_dir / f"{topic}-{partition}"
        if not path.exists():
            return
        doomed = self.log_dir / capped_dir_name(topic, partition, topic_id, _DELETE_SUFFIX)
        os.rename(path, doomed)
        shutil.rmtree(doomed, ignore_errors=True)

    def _catalogue_topics(self) -> dict[str, TopicInfo]:
        """What ``topics.json`` must record: the served topics plus those whose deletion is not yet committed."""
        return {**self._topics, **self._hidden}

    def delete_topic(self, name: str) -> TopicInfo:
        """:meth:`delete_topic_steps` run to its end in one go."""
        return run_steps(self.delete_topic_steps(name))

    def delete_topic_steps(self, name: str) -> Steps[TopicInfo]:
        """Delete a topic in steps, in an order that needs no free disk space and is safe to kill at any point.

        1. The topic stops being served (gone from :meth:`topic` and :meth:`get`) and its logs are closed.
        2. Each partition directory is renamed to Kafka's ``<topic>-<partition>.<id>-delete`` name (topic cut
           short for long names, see :func:`~storage.topics.capped_dir_name`), where ``<id>`` is the topic id.
           The first rename is the commit point: startup finishes the deletion of a catalogued topic when it
           finds a ``-delete`` directory carrying its id (:meth:`_finish_deletions`).
        3. The files in those directories are removed, which frees the space.
        4. ``topics.json`` is rewritten without the topic (this needs space, which step 3 just freed).
        5. The empty ``-delete`` directories are removed.

        A crash before step 2 leaves the topic whole; after it, no topic. If step 4 fails the deletion stands
        (logged); the next catalogue write or restart records it.
        """
        self._check_open()
        info = self._topics.get(name)
        if info is None:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
        return self._delete_topic(info)

    def _delete_topic(self, info: TopicInfo) -> Steps[TopicInfo]:
        name = info.name
        del self._topics[name]
        self.topics_version += 1
        self._hidden[name] = info
        self._pending[name] = "is marked for deletion"
        logs = [self._logs.pop((name, partition), None) for partition in range(info.partitions)]
        try:
            for log in logs:
                if log is not None:
                    log.close()
                    yield
            doomed = yield from self._rename_for_deletion(info)
            yield from self._remove_deleted(info, doomed)
        except BaseException:
            if name in self._hidden:
                # Failed before the commit point (nothing renamed): the topic stays; reopen its logs.
                del self._hidden[name]
                self._topics[name] = info
                self.topics_version += 1
                self._reopen_logs(info)
            raise
        finally:
            del self._pending[name]
        _log.info("topic_deleted", topic=name, topic_id=kafka_uuid_to_str(info.topic_id))
        return info

    def _rename_for_deletion(self, info: TopicInfo) -> Steps[list[Path]]:
        doomed: list[Path] = []
        for partition in range(info.partitions):
            path = self.log_dir / f"{info.name}-{partition}"
            target = self.log_dir / capped_dir_name(info.name, partition, info.topic_id, _DELETE_SUFFIX)
            try:
                os.rename(path, target)
            except FileNotFoundError:
                continue
            if not doomed:
                # Committed: from now on the topic is gone whatever happens (startup finishes the deletion).
                self._hidden.pop(info.name, None)
            doomed.append(target)
            yield
        if self._hidden.pop(info.name, None) is not None:
            _log.warning("topic_deleted_without_directories", topic=info.name)
        fsync_dir(self.log_dir)
        return doomed

    def _remove_deleted(self, info: TopicInfo, doomed: list[Path]) -> Steps[None]:
        """Steps 3-5 of :meth:`delete_topic_steps` for directories already renamed to ``-delete`` names."""
        for path in doomed:
            _empty_dir(path)
            yield
        try:
            self._catalogue.save(self._catalogue_topics())
        except OSError as exc:
            _log.error("topic_catalogue_write_failed", topic=info.name, error=str(exc))
            return
        for path in doomed:
            with contextlib.suppress(OSError):
                os.rmdir(path)
            yield

    def _reopen_logs(self, info: TopicInfo) -> None:
        config = self.topic_config(info.name)
        for partition in range(info.partitions):
            path = self.log_dir / f"{info.name}-{partition}"
            if (info.name, partition) not in self._logs and path.is_dir():
                self._logs[(info.name, partition)] = PartitionLog(path, config, recovery_point=None, clock=self._clock)

    def _finish_deletions(self) -> None:
        """Startup: finish deletions that passed their commit point, and remove ``-delete`` leftovers.

        A ``-delete`` directory is garbage by its name (Kafka's rule); one whose id is a catalogued topic's id
        means that topic's deletion was committed (see :meth:`delete_topic_steps`), so its other partition
        directories are renamed and removed too and the catalogue is rewritten without it. Names cut short for
        long topics are recognised by the id, not the topic.
        """
        by_id = {info.topic_id: info for info in self._topics.values()}
        committed: dict[str, TopicInfo] = {}
        for entry in sorted(os.listdir(self.log_dir)):
            parsed = parse_capped_dir_name(entry, _DELETE_SUFFIX)
            if parsed is not None and parsed[2] in by_id and (self.log_dir / entry).is_dir():
                info = by_id[parsed[2]]
                committed[info.name] = info
        for info in committed.values():
            _log.warning("topic_deletion_resumed", topic=info.name, topic_id=kafka_uuid_to_str(info.topic_id))
            del self._topics[info.name]
            self.topics_version += 1
            run_steps(self._rename_for_deletion(info))
        leftovers = [
            self.log_dir / entry
            for entry in sorted(os.listdir(self.log_dir))
            if entry.endswith(_DELETE_SUFFIX) and (self.log_dir / entry).is_dir()
        ]
        for path in leftovers:
            _empty_dir(path)
        if committed:
            self._catalogue.save(self._catalogue_topics())
        for path in leftovers:
            with contextlib.suppress(OSError):
                os.rmdir(path)

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

    def close(self) -> bool:
        """Clean shutdown: flush every log, checkpoint the recovery points, close every log; True when all of it
        was made durable.

        A storage error (a full disk, EIO) does not stop the shutdown, as in Kafka, whose server swallows the error
        of its log manager's shutdown: each failed flush or checkpoint is one error line naming the log or file and
        the errno, every other log is still flushed, and every log is closed, so every descriptor is released.
        Nothing acknowledged is lost by it: acknowledged data was written to the OS before the answer was sent. A
        log whose flush failed keeps its older recovery point (so does every log when the checkpoint cannot be
        written), which only means more of it is scanned at the next start.
        """
        if self._closed:
            return True
        durable = True
        for (topic, partition), log in self._logs.items():
            try:
                log.flush()
            except (KafkaStorageError, OSError) as exc:
                durable = False
                _log.error(
                    "storage.shutdown_flush_failed",
                    topic=topic,
                    partition=partition,
                    directory=str(log.directory),
                    **os_error_fields(exc),
                    consequence=_NOT_DURABLE_AT_SHUTDOWN,
                )
        try:
            self.checkpoint()
        except OSError as exc:
            durable = False
            _log.error(
                "storage.shutdown_checkpoint_failed",
                file=str(self.log_dir / RECOVERY_POINT_CHECKPOINT),
                **os_error_fields(exc),
                consequence=_NOT_DURABLE_AT_SHUTDOWN,
            )
        for log in self._logs.values():
            log.close()
        self._closed = True
        return durable

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosedError("log manager is closed")
