"""A small blocking Kafka client for the operator CLI: speaks to any Kafka-compatible broker, real Kafka included.

It negotiates versions from the broker's ApiVersions answer like every real client does, and caps each API at a
version whose request shape the CLI builds (OffsetFetch before the batched v8 form, single-key FindCoordinator).
"""

from __future__ import annotations

import itertools
import socket
import ssl
import struct
from collections.abc import Callable
from typing import Any, Protocol

from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.metadata import MetadataRequest
from protocol.messages.request_header import RequestHeader
from protocol.registry import APIS, ApiKey

GROUP_KEY = 0
"""FindCoordinator key types: a group, a transactional id."""
TRANSACTION_KEY = 1

# Highest version per API whose request shape this client builds.
VERSION_CAPS = {
    ApiKey.METADATA: 12,
    ApiKey.FIND_COORDINATOR: 3,
    ApiKey.DESCRIBE_GROUPS: 5,
    ApiKey.LIST_GROUPS: 5,
    ApiKey.OFFSET_FETCH: 7,
    ApiKey.OFFSET_COMMIT: 8,
    ApiKey.LIST_OFFSETS: 7,
}


class KafkaClientError(RuntimeError):
    """The broker answered with an error, or we cannot talk to it."""


class RetriableError(KafkaClientError):
    """A coordinator that cannot answer yet (loading, not available): worth asking again shortly."""


RETRIABLE = frozenset({ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE})


def check(error: int, what: str) -> None:
    """Raise for an error code: `RetriableError` for a coordinator not ready yet, else `KafkaClientError`."""
    if error != ErrorCode.NONE:
        raise (RetriableError if error in RETRIABLE else KafkaClientError)(f"{what}: {ErrorCode(error).name}")


class Security(Protocol):
    """How to secure a connection (cli.client_security.ClientSecurity): a TLS context, and a SASL login run over
    the connection's requests once versions are negotiated."""

    @property
    def context(self) -> ssl.SSLContext | None: ...

    def login(self, call: Callable[[ApiKey, Any], Any]) -> None: ...


class Connection:
    def __init__(
        self,
        host: str,
        port: int,
        client_id: str = "group-broker-cli",
        timeout_s: float = 30.0,
        security: Security | None = None,
    ) -> None:
        self._sock = socket.create_connection((host, port), timeout=timeout_s)
        if security is not None and security.context is not None:
            self._sock = security.context.wrap_socket(self._sock, server_hostname=host)
        self._client_id = client_id
        self._correlation = itertools.count(1)
        self.versions: dict[int, int] = {}
        try:
            self._negotiate()
            if security is not None:
                security.login(lambda api_key, body: self.call(api_key, body)[1])
        except BaseException:
            self._sock.close()
            raise

    def _negotiate(self) -> None:
        response = self._send(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
        if response.error_code != ErrorCode.NONE:
            raise KafkaClientError(f"ApiVersions failed: {ErrorCode(response.error_code).name}")
        for entry in response.api_keys:
            spec = APIS.get(entry.api_key)
            if spec is None:
                continue
            high = min(entry.max_version, spec.max_version, VERSION_CAPS.get(ApiKey(entry.api_key), 99))
            if high >= max(entry.min_version, spec.min_version):
                self.versions[entry.api_key] = high

    def _recv_exact(self, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            chunk = self._sock.recv(size - len(chunks))
            if not chunk:
                raise KafkaClientError("connection closed by the broker")
            chunks += chunk
        return bytes(chunks)

    def _send(self, api_key: ApiKey, version: int, body: Any) -> Any:
        correlation_id = next(self._correlation)
        header = RequestHeader(
            request_api_key=api_key,
            request_api_version=version,
            correlation_id=correlation_id,
            client_id=self._client_id,
        )
        self._sock.sendall(api.encode_request(header, body))
        size = struct.unpack(">i", self._recv_exact(4))[0]
        response_header, response = api.decode_response(api_key, version, self._recv_exact(size))
        if response_header.correlation_id != correlation_id:
            raise KafkaClientError("correlation id mismatch")
        return response

    def call(self, api_key: ApiKey, body: Any) -> tuple[int, Any]:
        """(version used, response)."""
        version = self.versions.get(api_key)
        if version is None:
            raise KafkaClientError(f"the broker does not support {api_key.name}")
        return version, self._send(api_key, version, body)

    def close(self) -> None:
        self._sock.close()


class KafkaClient:
    """Bootstrap connection plus one connection per other broker (coordinators, leaders), opened on demand."""

    def __init__(self, bootstrap: str, security: Security | None = None) -> None:
        host, _, port = bootstrap.rpartition(":")
        self._security = security
        self.bootstrap = Connection(host, int(port), security=security)
        self._connections: dict[tuple[str, int], Connection] = {}

    def find_coordinator(self, key: str, key_type: int = GROUP_KEY) -> tuple[str, int, int]:
        """The coordinator of a group (key type 0) or a transactional id (key type 1): host, port and node id."""
        request = FindCoordinatorRequest(key=key, key_type=key_type)
        _, response = self.bootstrap.call(ApiKey.FIND_COORDINATOR, request)
        check(response.error_code, "FindCoordinator")
        return response.host, response.port, response.node_id

    def coordinator(self, key: str, key_type: int = GROUP_KEY) -> Connection:
        host, port, _ = self.find_coordinator(key, key_type)
        return self.connection(host, port)

    def connection(self, host: str, port: int) -> Connection:
        """A connection to this broker (opened once, closed with the client)."""
        address = (host, port)
        if address not in self._connections:
            self._connections[address] = Connection(*address, security=self._security)
        return self._connections[address]

    def brokers(self) -> list[tuple[int, str, int]]:
        """Every broker of the cluster (node id, host, port), from Metadata, by node id."""
        request = MetadataRequest(topics=[], allow_auto_topic_creation=False)
        _, response = self.bootstrap.call(ApiKey.METADATA, request)
        return sorted((b.node_id, b.host, b.port) for b in response.brokers)

    def close(self) -> None:
        self.bootstrap.close()
        for connection in self._connections.values():
            connection.close()
