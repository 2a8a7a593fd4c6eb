"""Name mapping between Kafka's JSON schemas and Python, shared by the generator and the test oracles."""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """`GroupInstanceId` -> `group_instance_id`, `protocolType` -> `protocol_type` (Kafka names to Python)."""
    return _BOUNDARY.sub("_", name).lower()


def module_name(message_name: str) -> str:
    """`JoinGroupRequest` -> `join_group`: one module holds an API's request and response."""
    for suffix in ("Request", "Response"):
        if message_name.endswith(suffix) and message_name not in ("RequestHeader", "ResponseHeader"):
            return snake_case(message_name[: -len(suffix)])
    return snake_case(message_name)
