"""The connection layer with raw bytes: ordering, ApiVersions fallback, and bad input closing only one connection."""

from __future__ import annotations

import asyncio
import struct

from broker.app import Broker
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient


async def test_api_versions_v0_lists_what_the_broker_serves(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    response = await client.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
    assert response.error_code == ErrorCode.NONE
    advertised = {v.api_key: (v.min_version, v.max_version) for v in response.api_keys}
    assert advertised[ApiKey.API_VERSIONS] == (0, 5)
    assert set(advertised) == {key for key, route in broker.dispatcher.routes.items() if route.advertised}
    await client.close()


async def test_api_versions_v3_flexible_request_gets_v0_response_header(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    request = ApiVersionsRequest(client_software_name="wire", client_software_version="1")
    response = await client.call(ApiKey.API_VERSIONS, 3, request)
    assert response.error_code == ErrorCode.NONE
    await client.close()


async def test_unsupported_api_versions_version_is_answered_in_v0_with_error_35(broker: Broker) -> None:
    """KIP-511: the client learns our range for key 18 and retries with a version we speak."""
    client = await WireClient.connect(broker.ports[0])
    # ApiVersions v9 (does not exist): header v2 layout, body we cannot parse
    frame = struct.pack(">hhih", 18, 9, 77, -1) + b"\x00garbage"
    client.writer.write(struct.pack(">i", len(frame)) + frame)
    header, body = api.decode_response(ApiKey.API_VERSIONS, 0, await client.read_frame())
    assert header.correlation_id == 77
    assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(v.api_key, v.min_version, v.max_version) for v in body.api_keys] == [(18, 0, 5)]
    await client.close()


async def test_an_api_versions_version_the_codec_reads_but_the_broker_does_not_serve_gets_the_fallback(
    broker: Broker,
) -> None:
    """KIP-511 again, for a version the codec can read but the broker does not advertise (the Java 4.4 client opens
    with the newest ApiVersions it knows): answered in v0 with our range, never by closing the connection."""
    route = broker.dispatcher.routes[ApiKey.API_VERSIONS]
    served = route.max_version - 1  # serve one version less than the codec reads
    broker.dispatcher.register(ApiKey.API_VERSIONS, route.handler, (route.min_version, served))
    client = await WireClient.connect(broker.ports[0])
    request = ApiVersionsRequest(client_software_name="wire", client_software_version="1")
    correlation, frame = client.frame(ApiKey.API_VERSIONS, served + 1, request)
    client.writer.write(frame)
    header, body = api.decode_response(ApiKey.API_VERSIONS, 0, await client.read_frame())
    assert (header.correlation_id, body.error_code) == (correlation, ErrorCode.UNSUPPORTED_VERSION)
    assert [(v.api_key, v.max_version) for v in body.api_keys] == [(18, served)]
    await client.close()


async def test_pipelined_requests_are_answered_in_order(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    frames = [client.frame(ApiKey.API_VERSIONS, v % 3, ApiVersionsRequest()) for v in range(20)]
    client.writer.write(b"".join(frame for _, frame in frames))
    seen = []
    for _ in frames:
        seen.append(struct.unpack(">i", (await client.read_frame())[:4])[0])
    assert seen == [correlation for correlation, _ in frames]
    await client.close()


async def test_garbage_closes_only_that_connection(broker: Broker) -> None:
    healthy = await WireClient.connect(broker.ports[0])
    bad = await WireClient.connect(broker.ports[0])
    bad.writer.write(b"\x00\x00\x00\x08\x12\x34\x56\x78\x9a\xbc\xde\xf0")  # unknown api key 0x1234
    assert await bad.closed_by_peer()
    await bad.close()
    assert (await healthy.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    await healthy.close()


async def test_oversized_frame_is_refused_on_its_size_prefix(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.broker.conftest import broker_config

    small = Broker(broker_config(tmp_path, socket_request_max_bytes="1000"))
    await small.start()
    try:
        client = await WireClient.connect(small.ports[0])
        client.writer.write(struct.pack(">i", 1001))
        assert await client.closed_by_peer()
        await client.close()
    finally:
        await small.stop()


async def test_malformed_body_closes_the_connection_as_kafka_does(broker: Broker) -> None:
    """Trailing bytes after a whole body are ignored; a body that cannot be read closes the connection, whatever the
    API (Kafka's RequestContext.parseRequest raises InvalidRequestException and the socket is closed; the
    differential suite's malformed_bodies shows it). Only this connection: another one still answers."""
    client = await WireClient.connect(broker.ports[0])
    frame = struct.pack(">hhih", 18, 2, 5, -1) + b"\x01"  # ApiVersions v2 has no body; trailing bytes are ignored
    client.writer.write(struct.pack(">i", len(frame)) + frame)
    header, body = api.decode_response(ApiKey.API_VERSIONS, 2, await client.read_frame())
    assert header.correlation_id == 5 and body.error_code == ErrorCode.NONE
    frame = struct.pack(">hhih", 18, 3, 6, -1) + b"\x00\x05ab"  # v3: client_software_name claims 4 bytes, has 2
    client.writer.write(struct.pack(">i", len(frame)) + frame)
    assert await client.closed_by_peer()
    await client.close()
    healthy = await WireClient.connect(broker.ports[0])
    assert (await healthy.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    await healthy.close()


async def test_api_versions_v3_refuses_software_names_kafka_refuses(broker: Broker) -> None:
    """KIP-511's name and version pattern: anything else (the empty string included) is INVALID_REQUEST with no
    ranges, on a connection that stays open, as Kafka's ApiVersionsRequest.isValid decides."""
    client = await WireClient.connect(broker.ports[0])
    for name, version in (("bad name!", "1.0"), ("", ""), ("librdkafka", "2.3.0-"), ("-x", "1")):
        request = ApiVersionsRequest(client_software_name=name, client_software_version=version)
        response = await client.call(ApiKey.API_VERSIONS, 3, request)
        assert (response.error_code, response.api_keys) == (ErrorCode.INVALID_REQUEST, []), (name, version)
    for name, version in (("librdkafka", "2.3.0"), ("a", "1"), ("apache-kafka-java", "4.4.0")):
        request = ApiVersionsRequest(client_software_name=name, client_software_version=version)
        response = await client.call(ApiKey.API_VERSIONS, 3, request)
        assert response.error_code == ErrorCode.NONE and response.api_keys, (name, version)
    assert (await client.call(ApiKey.API_VERSIONS, 2, ApiVersionsRequest())).error_code == ErrorCode.NONE
    await client.close()


async def test_disconnect_mid_frame_does_not_disturb_others(broker: Broker) -> None:
    healthy = await WireClient.connect(broker.ports[0])
    quitter = await WireClient.connect(broker.ports[0])
    quitter.writer.write(b"\x00\x00\x00\x40\x00\x12")
    await quitter.writer.drain()
    await quitter.close()
    await asyncio.sleep(0)
    assert (await healthy.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    await healthy.close()


async def test_a_connection_beyond_max_connections_is_served_once_a_slot_frees(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """As Kafka's acceptor waits for a slot: the second connection is accepted but not read until the first closes."""
    from tests.broker.conftest import broker_config
    from tests.support.broker_process import wait_until_async

    limited = Broker(broker_config(tmp_path, max_connections="1"))
    await limited.start()
    try:
        first = await WireClient.connect(limited.ports[0])
        assert (await first.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
        second = await WireClient.connect(limited.ports[0])
        correlation, frame = second.frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
        second.writer.write(frame)
        await wait_until_async(lambda: len(limited._slots.waiting) == 1, what="the second connection waiting")
        assert len(limited.connections) == 1
        await first.close()
        header, body = api.decode_response(ApiKey.API_VERSIONS, 0, await second.read_frame())
        assert (header.correlation_id, body.error_code) == (correlation, ErrorCode.NONE)
        await second.close()
    finally:
        await limited.stop()
