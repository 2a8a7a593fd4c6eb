"""Kafka API and error names as tests and the control API spell them: `"OffsetCommit"`, `"NOT_COORDINATOR"` or codes."""

from __future__ import annotations

from protocol.errors import ErrorCode
from protocol.registry import ApiKey


def api_key_of(api: str | int) -> ApiKey:
    """`"OffsetCommit"`, `"OFFSET_COMMIT"`, `"offset_commit"` or `8`."""
    if isinstance(api, int):
        return ApiKey(api)
    normalized = "".join(ch for ch in api if ch.isalnum()).lower()
    for key in ApiKey:
        if key.name.replace("_", "").lower() == normalized:
            return key
    raise ValueError(f"unknown API {api!r}")


def error_of(error: str | int) -> ErrorCode:
    return ErrorCode(error) if isinstance(error, int) else ErrorCode[error.upper()]
