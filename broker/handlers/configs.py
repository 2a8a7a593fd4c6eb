"""Config APIs: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs and ListConfigResources, as Kafka 4.4 answers.

Resources are topics (2), this broker (4: ``"<node id>"`` for its own dynamic configs, ``""`` for the cluster-wide
defaults) and its loggers (8, none exposed: the broker logs through structlog, not log4j). Each resource gets its own
answer; a refusal carries Kafka's code and message and changes nothing. AlterConfigs replaces the whole set of
overrides of a resource, IncrementalAlterConfigs changes only the keys it names; ``validate_only`` runs every check
and changes nothing. Topic changes are applied in turn with creations and deletions (`TopicChanges`), so a config
change never races a topic's growth.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from broker.cluster import ClusterView
from broker.config import KEYS
from broker.config_describe import Entry, broker_entries, cluster_default_entries, topic_entries
from broker.config_layers import default_text
from broker.config_ops import BrokerRules, Op, Operation, TopicRules, apply_operations, check_keys_and_values
from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.dynamic_config import CLUSTER, NODE, ConfigRequestError, DynamicConfigs
from broker.topics import TopicChanges
from protocol.errors import ErrorCode
from protocol.messages import alter_configs as alter
from protocol.messages import incremental_alter_configs as incremental
from protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)
from protocol.messages.list_config_resources import (
    ConfigResource,
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
)
from protocol.registry import ApiKey
from storage.config import TOPIC_CONFIGS, validate_topic_configs
from storage.config_def import ConfigType
from storage.errors import StorageError
from storage.log_manager import LogManager
from storage.topics import TopicInfo, validate_topic_name

__all__ = ["RESOURCE_BROKER", "RESOURCE_BROKER_LOGGER", "RESOURCE_TOPIC", "ConfigHandlers"]

RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
RESOURCE_BROKER_LOGGER = 8
RESOURCE_CLIENT_METRICS = 16
RESOURCE_GROUP = 32
#: ListConfigResources v1: the types Kafka lists without a client-metrics or group-config plugin.
_LISTABLE = (RESOURCE_BROKER_LOGGER, RESOURCE_BROKER, RESOURCE_TOPIC, RESOURCE_CLIENT_METRICS, RESOURCE_GROUP)
#: ``Errors.INVALID_REQUEST.message()``: what Kafka says when it cannot name the problem.
_MALFORMED = (
    "This most likely occurs because of a request being malformed by the client library or the message was sent "
    "to an incompatible broker. See the broker logs for more details."
)
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_LOG_LEVELS = ("DEBUG", "ERROR", "FATAL", "INFO", "TRACE", "WARN")


def _node_id_of(name: str, what: str) -> int:
    """Java's ``Integer.parseInt`` of a broker resource name, with Kafka's message when it is not a number."""
    if _JAVA_INT.fullmatch(name) is None or not -(1 << 31) <= int(name) < (1 << 31):
        raise ConfigRequestError(ErrorCode.INVALID_REQUEST, f"{what} must be an integer, but it is: {name}")
    return int(name)


class ConfigHandlers:
    def __init__(self, configs: DynamicConfigs, logs: LogManager, topics: TopicChanges, cluster: ClusterView) -> None:
        self._configs = configs
        self._logs = logs
        self._topics = topics
        self._cluster = cluster

    @property
    def _node_id(self) -> int:
        return self._cluster.local.node_id

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.DESCRIBE_CONFIGS, self.describe_configs)
        d.register(ApiKey.ALTER_CONFIGS, self.alter_configs)
        d.register(ApiKey.INCREMENTAL_ALTER_CONFIGS, self.incremental_alter_configs)
        d.register(ApiKey.LIST_CONFIG_RESOURCES, self.list_config_resources)

    # -- DescribeConfigs ---------------------------------------------------------------------------------------

    async def describe_configs(self, ctx: RequestContext, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
        results = []
        for resource in request.resources:
            result = DescribeConfigsResult(resource_type=resource.resource_type, resource_name=resource.resource_name)
            results.append(result)
            try:
                entries = self._entries(resource.resource_type, resource.resource_name)
            except ConfigRequestError as exc:
                result.error_code, result.error_message = exc.error_code, exc.message
                continue
            wanted = set(resource.configuration_keys or ())
            result.configs = [
                self._described(entry, request.include_synonyms, request.include_documentation, ctx.api_version)
                for entry in entries
                if not wanted or entry.name in wanted
            ]
        return DescribeConfigsResponse(results=results)

    def _entries(self, resource_type: int, name: str) -> list[Entry]:
        layers = self._configs.layers
        if resource_type == RESOURCE_TOPIC:
            return topic_entries(self._described_topic(name), layers, self._configs.topic_defaults())
        if resource_type == RESOURCE_BROKER:
            if name == "":
                return cluster_default_entries(layers)
            if _node_id_of(name, "Broker id") != self._node_id:
                message = f"Unexpected broker id, expected {self._node_id} or empty string, but received {name}"
                raise ConfigRequestError(ErrorCode.INVALID_REQUEST, message)
            return broker_entries(layers)
        if resource_type == RESOURCE_BROKER_LOGGER:
            if name == "":
                raise ConfigRequestError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
            if _node_id_of(name, "Broker id") != self._node_id:
                message = f"Unexpected broker id, expected {self._node_id} but received {name}"
                raise ConfigRequestError(ErrorCode.INVALID_REQUEST, message)
            return []  # no log4j loggers to list
        if resource_type in (RESOURCE_CLIENT_METRICS, RESOURCE_GROUP):
            message = f"Resource type {resource_type} is not supported by this broker"
            raise ConfigRequestError(ErrorCode.INVALID_REQUEST, message)
        raise ConfigRequestError(ErrorCode.INVALID_REQUEST, _MALFORMED)

    def _described_topic(self, name: str) -> TopicInfo:
        try:
            validate_topic_name(name)
        except StorageError as exc:
            raise ConfigRequestError(exc.error_code, str(exc)) from None
        info = self._logs.topic(name)
        if info is None:
            raise ConfigRequestError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")  # Kafka sends no message here
        return info

    @staticmethod
    def _described(entry: Entry, synonyms: bool, documentation: bool, version: int) -> DescribeConfigsResourceResult:
        item = DescribeConfigsResourceResult(
            name=entry.name,
            value=entry.value,
            read_only=entry.read_only,
            config_source=entry.source,
            is_sensitive=entry.sensitive,
        )
        if synonyms:
            item.synonyms = [
                DescribeConfigsSynonym(name=s.name, value=s.value, source=s.source) for s in entry.synonyms
            ]
        if version >= 3:
            item.config_type = entry.config_type
            item.documentation = entry.doc if documentation else None
        return item

    # -- AlterConfigs / IncrementalAlterConfigs ----------------------------------------------------------------

    async def alter_configs(
        self, ctx: RequestContext, request: alter.AlterConfigsRequest
    ) -> alter.AlterConfigsResponse:
        answers = await self._alter_each(request.resources, request.validate_only, incremental=False)
        return alter.AlterConfigsResponse(responses=[alter.AlterConfigsResourceResponse(**a) for a in answers])

    async def incremental_alter_configs(
        self, ctx: RequestContext, request: incremental.IncrementalAlterConfigsRequest
    ) -> incremental.IncrementalAlterConfigsResponse:
        answers = await self._alter_each(request.resources, request.validate_only, incremental=True)
        return incremental.IncrementalAlterConfigsResponse(
            responses=[incremental.AlterConfigsResourceResponse(**a) for a in answers]
        )

    async def _alter_each(
        self,
        resources: Sequence[alter.AlterConfigsResource | incremental.AlterConfigsResource],
        validate_only: bool,
        *,
        incremental: bool,
    ) -> list[dict[str, Any]]:
        """Each resource on its own, in order: the fields of its answer (AlterConfigs' entries are SETs). A resource
        named twice is refused, every time it is named, and left as it is."""
        named = Counter((resource.resource_type, resource.resource_name) for resource in resources)
        answers = []
        for resource in resources:
            ops = [Op(c.name, getattr(c, "config_operation", Operation.SET), c.value) for c in resource.configs]
            error: int
            message: str | None
            if named[(resource.resource_type, resource.resource_name)] > 1:
                error, message = ErrorCode.INVALID_REQUEST, "Each resource must appear at most once."
            else:
                error, message = await self._alter(
                    resource.resource_type, resource.resource_name, ops, validate_only, incremental=incremental
                )
            answers.append(
                {
                    "error_code": error,
                    "error_message": message,
                    "resource_type": resource.resource_type,
                    "resource_name": resource.resource_name,
                }
            )
        return answers

    async def _alter(
        self, resource_type: int, name: str, ops: Sequence[Op], validate_only: bool, *, incremental: bool
    ) -> tuple[int, str | None]:
        """One resource: (error code, message), (NONE, None) when applied or valid."""
        try:
            await self._alter_resource(resource_type, name, ops, validate_only, incremental)
        except ConfigRequestError as exc:
            return exc.error_code, exc.message
        except StorageError as exc:
            return exc.error_code, str(exc)
        return ErrorCode.NONE, None

    async def _alter_resource(
        self, resource_type: int, name: str, ops: Sequence[Op], validate_only: bool, incremental: bool
    ) -> None:
        check_keys_and_values(ops)
        if resource_type == RESOURCE_TOPIC:
            await self._alter_topic(name, ops, validate_only, incremental)
        elif resource_type == RESOURCE_BROKER:
            self._alter_broker(name, ops, validate_only, incremental)
        elif resource_type == RESOURCE_BROKER_LOGGER and incremental:
            self._alter_loggers(name, ops)
        else:
            raise ConfigRequestError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {resource_type}")

    async def _alter_topic(self, name: str, ops: Sequence[Op], validate_only: bool, incremental: bool) -> None:
        """Kafka's controller order: apply the operations, then the topic name, the keys and values, and last
        whether the topic exists."""
        info = self._logs.topic(name)
        current = {} if info is None or not incremental else dict(info.configs)
        rules = TopicRules(lambda key: key in TOPIC_CONFIGS and TOPIC_CONFIGS[key].type is ConfigType.LIST)
        proposed, _ = apply_operations(current, ops, rules, _topic_default)
        if name == "":
            raise ConfigRequestError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
        try:
            validate_topic_name(name)
            overrides = validate_topic_configs(proposed, self._configs.topic_defaults())
        except StorageError as exc:
            raise ConfigRequestError(exc.error_code, str(exc)) from None
        if info is None:
            raise ConfigRequestError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        if not validate_only:
            await self._topics.alter_configs(name, overrides)

    def _alter_broker(self, name: str, ops: Sequence[Op], validate_only: bool, incremental: bool) -> None:
        scope = CLUSTER if name == "" else NODE
        if scope == NODE and _node_id_of(name, "Node id") != self._node_id:
            message = f"Unexpected broker id, expected {self._node_id}, but received {name}"
            raise ConfigRequestError(ErrorCode.INVALID_REQUEST, message)
        rules = BrokerRules(lambda key: key in KEYS and KEYS[key].type == "list", lambda key: key in KEYS)
        current = dict(self._configs.current(scope)) if incremental else {}
        proposed, set_keys = apply_operations(current, ops, rules, _broker_default)
        self._configs.check(scope, proposed, set_keys, frozenset(op.name for op in ops))
        if not validate_only:
            self._configs.replace(scope, proposed)

    @staticmethod
    def _alter_loggers(name: str, ops: Sequence[Op]) -> None:
        """BROKER_LOGGER: this broker exposes no log4j loggers, so every logger is one that does not exist."""
        _node_id_of(name, "Node id")
        for op in ops:
            if op.operation not in (Operation.SET, Operation.DELETE):
                kind = Operation(op.operation).name if op.operation in tuple(Operation) else op.operation
                message = f"{kind} operation is not allowed for the BROKER_LOGGER resource"
                raise ConfigRequestError(ErrorCode.INVALID_REQUEST, message)
            if op.operation == Operation.SET and op.value not in _LOG_LEVELS:
                raise ConfigRequestError(
                    ErrorCode.INVALID_CONFIG,
                    f"Cannot set the log level of {op.name} to {op.value} as it is not a supported log level. "
                    f"Valid log levels are {', '.join(_LOG_LEVELS)}",
                )
            raise ConfigRequestError(ErrorCode.INVALID_CONFIG, f"Logger {op.name} does not exist!")

    # -- ListConfigResources -----------------------------------------------------------------------------------

    async def list_config_resources(
        self, ctx: RequestContext, request: ListConfigResourcesRequest
    ) -> ListConfigResourcesResponse:
        """v0 (ListClientMetricsResources) lists client-metrics subscriptions only: there are none. v1 lists the
        asked types (all when none is asked); group and client-metrics resources exist only once configured."""
        if ctx.api_version == 0:
            return ListConfigResourcesResponse()
        wanted = set(request.resource_types) or set(_LISTABLE)
        if not wanted <= set(_LISTABLE):
            return ListConfigResourcesResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
        node = str(self._node_id)
        found = []
        if RESOURCE_BROKER_LOGGER in wanted:
            found.append(ConfigResource(resource_name=node, resource_type=RESOURCE_BROKER_LOGGER))
        if RESOURCE_BROKER in wanted:
            found.append(ConfigResource(resource_name=node, resource_type=RESOURCE_BROKER))
        if RESOURCE_TOPIC in wanted:
            found += [ConfigResource(resource_name=t.name, resource_type=RESOURCE_TOPIC) for t in self._logs.topics()]
        return ListConfigResourcesResponse(config_resources=found)


def _topic_default(name: str) -> str | None:
    key = TOPIC_CONFIGS.get(name)
    return None if key is None else key.text(key.default)


def _broker_default(name: str) -> str | None:
    key = KEYS.get(name)
    return None if key is None else default_text(key)
