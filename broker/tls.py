"""A listener's TLS settings, read the Kafka way, turned into a server `ssl.SSLContext`.

Kafka's keys (each may be overridden per listener with `listener.name.<name>.`): a PEM keystore, from a file
(`ssl.keystore.location`, key and chain in one file) or inline (`ssl.keystore.key` + `ssl.keystore.certificate.chain`),
`ssl.key.password` for an encrypted key; a PEM truststore (file or inline `ssl.truststore.certificates`) for client
certificates; `ssl.enabled.protocols`, `ssl.cipher.suites` (IANA names, as Java takes them) and `ssl.client.auth`.
Anything wrong is a `ConfigError` naming the key, raised before any socket is served.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from collections.abc import Mapping
from typing import Any

from broker.config import BrokerConfig, ConfigError
from broker.security.principal import PrincipalMappingError, SslPrincipalMapper
from broker.startup import StartupError

ANONYMOUS = "User:ANONYMOUS"
TLS_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})
PROTOCOL_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)
#: IANA (Java) names of the key exchange and bulk cipher parts, and OpenSSL's spelling of them.
_KEX = {"ECDHE_RSA": "ECDHE-RSA-", "ECDHE_ECDSA": "ECDHE-ECDSA-", "DHE_RSA": "DHE-RSA-", "RSA": ""}
_BULK = {
    "AES_128_GCM": "AES128-GCM",
    "AES_256_GCM": "AES256-GCM",
    "AES_128_CBC": "AES128",
    "AES_256_CBC": "AES256",
    "CHACHA20_POLY1305": "CHACHA20-POLY1305",
}

Settings = Mapping[str, tuple[Any, str]]  # base key -> (value, the key it was read from), BrokerConfig.listener_values


def tls_contexts(config: BrokerConfig) -> dict[str, ssl.SSLContext]:
    """A server context per SSL or SASL_SSL listener (by upper-cased name); a bad setting is a one-line
    `StartupError`."""
    contexts = {}
    for name, _, _ in config.listeners:
        if config.security_protocol_map.get(name.upper()) in TLS_PROTOCOLS:
            try:
                contexts[name.upper()] = server_context(config.listener_values(name))
            except ConfigError as exc:
                raise StartupError(f"listener {name}: {exc}") from None
    return contexts


def principal_mappers(config: BrokerConfig) -> dict[str, SslPrincipalMapper]:
    """The `ssl.principal.mapping.rules` of each SSL listener (per listener too); rules Kafka refuses are a one-line
    `StartupError`. SASL_SSL listeners take their principal from SASL, as Kafka's principal builder does."""
    mappers = {}
    for name, _, _ in config.listeners:
        if config.security_protocol_map.get(name.upper()) == "SSL":
            rules, key = config.listener_values(name)["ssl.principal.mapping.rules"]
            try:
                mappers[name.upper()] = SslPrincipalMapper(rules)
            except PrincipalMappingError as exc:
                raise StartupError(f"listener {name}: invalid value for '{key}': {exc}") from None
    return mappers


def peer_principal(
    ssl_object: ssl.SSLObject | None, mapper: SslPrincipalMapper | None = None
) -> tuple[str, str | None]:
    """The connection's principal and the client certificate's distinguished name (RFC 2253 order, as Java's
    X500Principal.getName() gives it), named through `ssl.principal.mapping.rules` (`mapper`; `NoMatchingRule`
    when none applies); without a client certificate Kafka's principal is User:ANONYMOUS."""
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return ANONYMOUS, None
    from cryptography import x509  # only for a client certificate: keeps it off the start of every broker

    dn = x509.load_der_x509_certificate(der).subject.rfc4514_string()
    return f"User:{mapper.name(dn) if mapper is not None else dn}", dn


def server_context(settings: Settings) -> ssl.SSLContext:
    """The server context for one SSL listener; `ConfigError` naming the key for any setting that cannot be used."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _protocols(context, settings)
    _keystore(context, settings)
    auth = _value(settings, "ssl.client.auth")
    context.verify_mode = CLIENT_AUTH[auth]
    if auth != "none":
        _truststore(context, settings)
    _ciphers(context, settings)
    return context


def _value(settings: Settings, key: str) -> Any:
    return settings[key][0]


def _fail(settings: Settings, key: str, reason: str) -> ConfigError:
    return ConfigError(f"invalid value for '{settings[key][1]}': {reason}")


def _protocols(context: ssl.SSLContext, settings: Settings) -> None:
    enabled = _value(settings, "ssl.enabled.protocols")
    unknown = [name for name in enabled if name not in PROTOCOL_VERSIONS]
    if unknown or not enabled:
        supported = ", ".join(PROTOCOL_VERSIONS)
        raise _fail(settings, "ssl.enabled.protocols", f"{','.join(unknown) or 'empty'} (supported: {supported})")
    versions = sorted(PROTOCOL_VERSIONS[name] for name in enabled)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]


def _keystore(context: ssl.SSLContext, settings: Settings) -> None:
    if (kind := _value(settings, "ssl.keystore.type")).upper() != "PEM":
        raise _fail(settings, "ssl.keystore.type", f"{kind} is not supported; only PEM")
    if _value(settings, "ssl.keystore.password") is not None:
        raise _fail(
            settings,
            "ssl.keystore.password",
            "SSL key store password cannot be specified with PEM format, only key password may be specified",
        )
    location = _value(settings, "ssl.keystore.location")
    chain, key = _value(settings, "ssl.keystore.certificate.chain"), _value(settings, "ssl.keystore.key")
    password = _value(settings, "ssl.key.password")
    if location is not None and (chain is not None or key is not None):
        raise _fail(settings, "ssl.keystore.location", "set either a keystore file or an inline key and chain")
    if location is None and (chain is None or key is None):
        missing = "ssl.keystore.key" if chain is not None else "ssl.keystore.certificate.chain"
        if chain is None and key is None:
            missing = "ssl.keystore.location"
        raise ConfigError(f"an SSL listener needs '{missing}' (ssl.keystore.type=PEM)")
    origin = "ssl.keystore.location" if location is not None else "ssl.keystore.key"
    try:
        if location is not None:
            context.load_cert_chain(location, password=password)
        else:
            _load_inline_chain(context, _normalise_pem(chain) + _normalise_pem(key), password)
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise _fail(settings, origin, _reason(exc)) from None


def _load_inline_chain(context: ssl.SSLContext, pem: str, password: str | None) -> None:
    """`load_cert_chain` reads only files: the inline key goes through a private temporary file, removed at once."""
    fd, path = tempfile.mkstemp(suffix=".pem")
    try:
        with os.fdopen(fd, "w") as file:
            file.write(pem)
        context.load_cert_chain(path, password=password)
    finally:
        os.unlink(path)


def _truststore(context: ssl.SSLContext, settings: Settings) -> None:
    if (kind := _value(settings, "ssl.truststore.type")).upper() != "PEM":
        raise _fail(settings, "ssl.truststore.type", f"{kind} is not supported; only PEM")
    location, inline = _value(settings, "ssl.truststore.location"), _value(settings, "ssl.truststore.certificates")
    if location is not None and inline is not None:
        raise _fail(settings, "ssl.truststore.location", "set either a truststore file or inline certificates")
    if location is None and inline is None:
        raise ConfigError(
            f"'{settings['ssl.client.auth'][1]}' asks for client certificates: set 'ssl.truststore.location' or "
            "'ssl.truststore.certificates' (PEM)"
        )
    origin = "ssl.truststore.location" if location is not None else "ssl.truststore.certificates"
    try:
        if location is not None:
            context.load_verify_locations(cafile=location)
        else:
            context.load_verify_locations(cadata=_normalise_pem(inline))
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise _fail(settings, origin, _reason(exc)) from None


def _ciphers(context: ssl.SSLContext, settings: Settings) -> None:
    """TLS 1.2 suites by their IANA names (Java's); TLS 1.3 names are accepted but OpenSSL always offers its own
    TLS 1.3 suites (Python cannot restrict them)."""
    suites = _value(settings, "ssl.cipher.suites")
    if not suites:
        return
    known = {cipher["name"] for cipher in context.get_ciphers()}
    names = []
    for suite in suites:
        name = openssl_cipher_name(suite)
        if name is None or name not in known:
            raise _fail(settings, "ssl.cipher.suites", f"unknown or unavailable cipher suite {suite}")
        if not name.startswith("TLS_"):
            names.append(name)
    if names:
        context.set_ciphers(":".join(names))


def openssl_cipher_name(iana: str) -> str | None:
    """`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256` -> `ECDHE-RSA-AES128-GCM-SHA256`; TLS 1.3 names are the same in
    both; None when the name is not one this mapping knows."""
    if not iana.startswith("TLS_"):
        return None
    if "_WITH_" not in iana:
        return iana  # TLS 1.3: TLS_AES_128_GCM_SHA256
    kex, _, rest = iana[len("TLS_") :].partition("_WITH_")
    bulk, _, mac = rest.rpartition("_")
    if kex not in _KEX or bulk not in _BULK:
        return None
    return f"{_KEX[kex]}{_BULK[bulk]}-{mac}"


def _normalise_pem(text: str) -> str:
    """Kafka takes inline PEM on one line (a properties value); OpenSSL wants 64-column lines."""
    blocks = []
    for label, body in _PEM_BLOCK.findall(text):
        data = "".join(body.split())
        lines = "\n".join(data[i : i + 64] for i in range(0, len(data), 64))
        blocks.append(f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----\n")
    if not blocks:
        raise ValueError("no PEM block found")
    return "".join(blocks)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and not isinstance(exc, ssl.SSLError):
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc)
