"""A tiny raw Kafka client for broker tests: send exact frames, read exact responses, no client library between."""

from __future__ import annotations

import asyncio
import itertools
import struct
from typing import Any

from protocol import api
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.request_header import RequestHeader

#: An ApiVersions v3+ request body as a real client sends it: KIP-511 names the client, and Kafka refuses an empty
#: name or version with INVALID_REQUEST.
NAMED_API_VERSIONS = ApiVersionsRequest(client_software_name="wire", client_software_version="1")


class WireClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._correlation = itertools.count(1)

    @classmethod
    async def connect(cls, port: int) -> WireClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    def frame(self, api_key: int, version: int, body: Any, client_id: str | None = "wire-test") -> tuple[int, bytes]:
        correlation_id = next(self._correlation)
        header = RequestHeader(
            request_api_key=api_key, request_api_version=version, correlation_id=correlation_id, client_id=client_id
        )
        return correlation_id, api.encode_request(header, body)

    async def read_frame(self) -> bytes:
        size = struct.unpack(">i", await self.reader.readexactly(4))[0]
        return await self.reader.readexactly(size)

    async def call(self, api_key: int, version: int, body: Any) -> Any:
        correlation_id, frame = self.frame(api_key, version, body)
        self.writer.write(frame)
        await self.writer.drain()
        header, response = api.decode_response(api_key, version, await self.read_frame())
        assert header.correlation_id == correlation_id
        return response

    async def closed_by_peer(self) -> bool:
        data = await asyncio.wait_for(self.reader.read(1), 5.0)
        return data == b""

    async def closed_or_reset(self) -> bool:
        """The broker closed: an end of stream, or a reset when it closed with our unread request still queued.
        Our side is closed either way."""
        try:
            return await self.closed_by_peer()
        except ConnectionResetError:
            return True
        finally:
            self.writer.close()

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()
