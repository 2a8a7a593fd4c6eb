"""Config API requests over the wire for broker tests: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs and
ListConfigResources with the resource and operation ids Kafka uses."""

from __future__ import annotations

from typing import Any

from protocol.messages import alter_configs as alter
from protocol.messages import incremental_alter_configs as incremental
from protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.list_config_resources import ListConfigResourcesRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
# DescribeConfigs' config_source and config_type ids
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT_BROKER, STATIC_BROKER, DEFAULT = 1, 2, 3, 4, 5
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST = 1, 2, 3, 4, 5, 6, 7


def describe_request(
    resource_type: int, name: str, keys: list[str] | None, synonyms: bool, documentation: bool
) -> DescribeConfigsRequest:
    resource = DescribeConfigsResource(resource_type=resource_type, resource_name=name, configuration_keys=keys)
    return DescribeConfigsRequest(resources=[resource], include_synonyms=synonyms, include_documentation=documentation)


def alter_request_of(
    resources: list[tuple[int, str, list[tuple[str, str | None]]]], validate_only: bool = False
) -> alter.AlterConfigsRequest:
    """AlterConfigs of several resources: ``(resource type, name, [(key, value)])`` each."""
    return alter.AlterConfigsRequest(
        resources=[
            alter.AlterConfigsResource(
                resource_type=resource_type,
                resource_name=name,
                configs=[alter.AlterableConfig(name=k, value=v) for k, v in pairs],
            )
            for resource_type, name, pairs in resources
        ],
        validate_only=validate_only,
    )


def alter_request(
    resource_type: int, name: str, pairs: list[tuple[str, str | None]], validate_only: bool = False
) -> alter.AlterConfigsRequest:
    return alter_request_of([(resource_type, name, pairs)], validate_only)


def incremental_request_of(
    resources: list[tuple[int, str, list[tuple[str, int, str | None]]]], validate_only: bool = False
) -> incremental.IncrementalAlterConfigsRequest:
    """IncrementalAlterConfigs of several resources: ``(resource type, name, [(key, operation, value)])`` each."""
    return incremental.IncrementalAlterConfigsRequest(
        resources=[
            incremental.AlterConfigsResource(
                resource_type=resource_type,
                resource_name=name,
                configs=[incremental.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops],
            )
            for resource_type, name, ops in resources
        ],
        validate_only=validate_only,
    )


def incremental_request(
    resource_type: int, name: str, ops: list[tuple[str, int, str | None]], validate_only: bool = False
) -> incremental.IncrementalAlterConfigsRequest:
    return incremental_request_of([(resource_type, name, ops)], validate_only)


async def describe(
    client: WireClient,
    resource_type: int,
    name: str,
    keys: list[str] | None = None,
    *,
    version: int = 4,
    synonyms: bool = False,
    documentation: bool = False,
) -> Any:
    request = describe_request(resource_type, name, keys, synonyms, documentation)
    [result] = (await client.call(ApiKey.DESCRIBE_CONFIGS, version, request)).results
    return result


async def described(client: WireClient, resource_type: int, name: str, **kw: Any) -> dict[str, Any]:
    """Each entry by name (the result must be error-free)."""
    result = await describe(client, resource_type, name, **kw)
    assert result.error_code == 0, result
    return {entry.name: entry for entry in result.configs}


async def alter_configs(
    client: WireClient,
    resource_type: int,
    name: str,
    configs: dict[str, str | None] | list[tuple[str, str | None]],
    *,
    version: int = 2,
    validate_only: bool = False,
) -> Any:
    """AlterConfigs of one resource; the (error_code, error_message) Kafka answers for it."""
    pairs = list(configs.items()) if isinstance(configs, dict) else configs
    request = alter_request(resource_type, name, pairs, validate_only)
    [answer] = (await client.call(ApiKey.ALTER_CONFIGS, version, request)).responses
    assert (answer.resource_type, answer.resource_name) == (resource_type, name)
    return answer.error_code, answer.error_message


async def incremental_alter(
    client: WireClient,
    resource_type: int,
    name: str,
    ops: list[tuple[str, int, str | None]],
    *,
    version: int = 1,
    validate_only: bool = False,
) -> Any:
    """IncrementalAlterConfigs of one resource: ``(key, operation, value)`` each; the (code, message) answer."""
    request = incremental_request(resource_type, name, ops, validate_only)
    [answer] = (await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, version, request)).responses
    assert (answer.resource_type, answer.resource_name) == (resource_type, name)
    return answer.error_code, answer.error_message


async def list_resources(client: WireClient, types: list[int] | None = None, *, version: int = 1) -> Any:
    request = ListConfigResourcesRequest(resource_types=types or [])
    return await client.call(ApiKey.LIST_CONFIG_RESOURCES, version, request)
