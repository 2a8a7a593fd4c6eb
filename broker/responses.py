"""Questions about response shapes that the connection, the metrics and the toolkit's faults all ask."""

from __future__ import annotations

import dataclasses
from typing import Any

from protocol.registry import APIS, ApiKey

JOIN_GROUP_NULLABLE_PROTOCOL_NAME = 7


def has_top_level_error_code(api_key: int, api_version: int) -> bool:
    """Whether this API's response carries a top-level `error_code` at this version (then a bad request can be
    answered with an error instead of closing the connection)."""
    return any(f.name == "error_code" and api_version in f.versions for f in APIS[api_key].response.struct.fields)


def top_level_error_response(api_key: int, error: int) -> Any:
    """A response that carries only `error` at its top level (check `has_top_level_error_code` first)."""
    return APIS[api_key].response.struct.cls(error_code=error)


def error_codes(response: Any) -> list[int]:
    """Every error code in a response, top level first: what the metrics label and the recorder keep."""
    found: list[int] = []
    stack = [response]
    while stack:
        item = stack.pop(0)
        code = getattr(item, "error_code", None)
        if isinstance(code, int):
            found.append(code)
        for name in getattr(item, "__slots__", ()):
            value = getattr(item, name, None)
            if isinstance(value, list):
                stack.extend(v for v in value if hasattr(v, "__slots__"))
    return found


def as_written(api_key: int, api_version: int, body: Any) -> Any:
    """``body`` with the values Kafka's response classes adjust to the version they are written at.

    Kafka's ``JoinGroupResponse`` constructor writes an empty protocol name as null from v7 (where the field became
    nullable) and a null one as "" below it, so every JoinGroup error answer carries ``protocol_name=null`` for
    modern clients. The coordinator answers in one shape for every version; this turns it into the shape of the
    version on the wire. A copy where a value changes, else ``body`` itself (a parked response may be shared).
    """
    if api_key == ApiKey.JOIN_GROUP:
        nullable = api_version >= JOIN_GROUP_NULLABLE_PROTOCOL_NAME
        if nullable and body.protocol_name == "":
            return dataclasses.replace(body, protocol_name=None)
        if not nullable and body.protocol_name is None:
            return dataclasses.replace(body, protocol_name="")
    return body
