"""`python -m bench security`'s set-up, without running a broker: the reference Kafka gets our TLS settings on its
own client listener, and one TLS broker serves both the server-only and the mutual-TLS clients."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

from bench.bench_security import TLS_SECURITY, Contexts, _kafka_tls_settings
from bench.wire_load import request_frame
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.registry import ApiKey
from toolkit.embedded import EmbeddedBroker
from toolkit.security import secure


def test_kafka_gets_our_tls_settings_on_its_client_listener(tmp_path: Path) -> None:
    broker, _ = secure(TLS_SECURITY, tmp_path)
    kafka = _kafka_tls_settings(broker)
    assert "listeners" not in kafka  # ReferenceKafka binds its own ports
    assert kafka["listener.security.protocol.map"] == "PLAINTEXT:SSL,CONTROLLER:PLAINTEXT"
    assert kafka["ssl.client.auth"] == "requested" and kafka["ssl.keystore.type"] == "PEM"


def test_one_tls_broker_serves_server_only_and_mutual_tls_clients() -> None:
    """The setups rows' two clients reach the same broker: anonymous without a certificate, CN=bench with one."""
    embedded = EmbeddedBroker(security=TLS_SECURITY).start()
    try:
        recorder = embedded.kit.recorder
        embedded.call(lambda: setattr(recorder, "enabled", True))
        contexts = Contexts.of(embedded.client_settings)
        host, port = embedded.bootstrap_servers.rsplit(":", 1)

        def api_versions(context: ssl.SSLContext) -> None:
            with (
                socket.create_connection((host, int(port)), timeout=10) as raw,
                context.wrap_socket(raw, server_hostname=host) as tls,
            ):
                tls.sendall(request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 0))
                assert len(tls.recv(4)) == 4  # the answer's size: the broker answered over this connection

        api_versions(contexts.tls)
        api_versions(contexts.mutual)
        exchanges = embedded.call(recorder.exchanges)
        assert [e.principal for e in exchanges] == ["User:ANONYMOUS", "User:CN=bench"]
    finally:
        embedded.stop()
