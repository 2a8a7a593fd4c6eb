"""What the floor tests (test_bench_floors.py, test_bench_data_floor.py) feed a floor connection and read back: a
transport that records each write, and request frames encoded with our codecs."""

from __future__ import annotations

from typing import Any

from protocol import api
from protocol.messages.request_header import RequestHeader
from protocol.registry import ApiKey


class Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def writelines(self, parts: list[bytes]) -> None:
        self.writes.append(b"".join(parts))

    def close(self) -> None:
        self.closed = True


def frame(api_key: ApiKey, version: int, body: Any, correlation_id: int) -> bytes:
    header = RequestHeader(
        request_api_key=api_key, request_api_version=version, correlation_id=correlation_id, client_id="unit"
    )
    return api.encode_request(header, body)
