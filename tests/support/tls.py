"""TLS material for tests: a fresh CA, a broker certificate and a client certificate written to a directory, the
broker properties that serve them, and the client settings of each library (from `toolkit.certs`)."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from toolkit.certs import CertFiles, write_certs

CLIENT_CN = "alice"


@dataclass(frozen=True, slots=True)
class TlsFiles:
    files: CertFiles

    @classmethod
    def create(cls, directory: Path) -> TlsFiles:
        return cls(write_certs(directory, client=CLIENT_CN))

    @property
    def client_principal(self) -> str:
        return f"User:CN={CLIENT_CN}"

    def broker_properties(self, client_auth: str = "required", prefix: str = "") -> dict[str, str]:
        """Kafka's keys for an SSL listener (`prefix`: `listener.name.<name>.` for one listener only)."""
        files = self.files
        return {
            f"{prefix}ssl.keystore.type": "PEM",
            f"{prefix}ssl.keystore.certificate.chain": files.broker_cert.read_text(),
            f"{prefix}ssl.keystore.key": files.broker_key.read_text(),
            f"{prefix}ssl.truststore.type": "PEM",
            f"{prefix}ssl.truststore.location": str(files.ca),
            f"{prefix}ssl.client.auth": client_auth,
        }

    def keystore_file(self, directory: Path) -> Path:
        """The broker's key and certificate chain in one PEM file, as `ssl.keystore.location` takes them (a
        properties file cannot hold the inline PEM's line breaks)."""
        keystore = directory / "keystore.pem"
        keystore.write_text(self.files.broker_key.read_text() + self.files.broker_cert.read_text())
        return keystore

    def client_context(self, *, with_certificate: bool = True) -> ssl.SSLContext:
        """A client context trusting the CA (hostname 127.0.0.1 checked against the SAN), with the client cert."""
        context = ssl.create_default_context(cafile=str(self.files.ca))
        if with_certificate:
            context.load_cert_chain(self.files.client_cert, self.files.client_key)
        return context
