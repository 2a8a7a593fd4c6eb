"""Certificates made on the fly for TLS: a CA, a broker certificate for 127.0.0.1/localhost, client certificates.

Tests and `group-broker certs` use the same helper, so what users run is what the tests prove. Keys are EC P-256
(instant to generate, accepted by OpenSSL, Java and every client library the tests drive) and certificates are
valid for a year from a minute ago (so a clock slightly behind the issuer's does not reject them). PEM throughout:
the broker reads Kafka's `ssl.keystore.type=PEM`, and every client library takes PEM files.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=365)
CLOCK_SKEW = datetime.timedelta(minutes=1)
BROKER_HOSTS = ("127.0.0.1", "localhost")


@dataclass(frozen=True, slots=True)
class Issued:
    """One certificate and its private key, as PEM. `key_pem` is PKCS#8, encrypted when a password was given
    (Kafka's PEM keystore requires PKCS#8 for an encrypted key)."""

    cert_pem: bytes
    key_pem: bytes
    password: str | None = None

    @property
    def subject(self) -> str:
        """The certificate's distinguished name in RFC 4514 form, as the broker derives the principal from it."""
        return x509.load_pem_x509_certificate(self.cert_pem).subject.rfc4514_string()


class CertificateAuthority:
    """A self-signed CA that issues broker (server) and client certificates."""

    def __init__(self, common_name: str = "group-broker test CA") -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        self._name = name
        self.cert = (
            _builder(name, name, self._key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(self._key, hashes.SHA256())
        )

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def issue_broker(self, hosts: tuple[str, ...] = BROKER_HOSTS, password: str | None = None) -> Issued:
        """A server certificate whose subjectAltName covers `hosts` (IP addresses and DNS names); also usable as a
        client certificate, as Kafka's own inter-broker connections present it under mutual TLS."""
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        extensions = [
            x509.SubjectAlternativeName(names),
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
        ]
        return self._issue(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]), extensions, password)

    def issue_client(self, common_name: str, organization: str | None = None, password: str | None = None) -> Issued:
        """A client certificate for mutual TLS; its subject (`CN=<name>[,O=<organization>]`) is the principal."""
        attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        if organization is not None:
            attributes.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
        extensions = [x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH])]
        return self._issue(x509.Name(attributes), extensions, password)

    def _issue(self, subject: x509.Name, extensions: Sequence[x509.ExtensionType], password: str | None) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = _builder(subject, self._name, key.public_key()).add_extension(
            x509.BasicConstraints(ca=False, path_length=None), critical=True
        )
        for extension in extensions:
            builder = builder.add_extension(extension, critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        encryption: serialization.KeySerializationEncryption = (
            serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
        )
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
        return Issued(cert.public_bytes(serialization.Encoding.PEM), key_pem, password)


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + VALIDITY)
    )


@dataclass(frozen=True, slots=True)
class CertFiles:
    """Where `write_certs` put each file."""

    ca: Path
    broker_cert: Path
    broker_key: Path
    client_cert: Path
    client_key: Path


def write_certs(directory: Path, client: str = "client", hosts: tuple[str, ...] = BROKER_HOSTS) -> CertFiles:
    """Write a fresh CA, a broker certificate for `hosts` and one client certificate (CN=`client`) as PEM files;
    private keys are written readable by the owner only."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = CertificateAuthority()
    broker = ca.issue_broker(hosts)
    user = ca.issue_client(client)
    files = CertFiles(
        directory / "ca.pem",
        directory / "broker.pem",
        directory / "broker.key",
        directory / f"{client}.pem",
        directory / f"{client}.key",
    )
    write_pem(files.ca, ca.cert_pem)
    for cert_path, key_path, issued in (
        (files.broker_cert, files.broker_key, broker),
        (files.client_cert, files.client_key, user),
    ):
        write_pem(cert_path, issued.cert_pem)
        write_pem(key_path, issued.key_pem, private=True)
    return files


def write_pem(path: Path, data: bytes, private: bool = False) -> Path:
    """Write PEM `data` to `path`; a private key is readable by its owner only from the moment the file exists."""
    if private:
        path.touch(mode=0o600)
        path.chmod(0o600)
    path.write_bytes(data)
    return path
