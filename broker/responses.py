"""Questions about response shapes that the connection, the metrics and the toolkit's faults all ask."""

from __future__ import annotations

from typing import Any

from protocol.registry import APIS


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
