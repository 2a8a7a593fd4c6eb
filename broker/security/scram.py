"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's ``ScramSaslServer`` runs them.

The math (:class:`ScramMechanism`: salted password, client/server keys, signatures) and the server's two steps:

1. client-first ``n,[a=<authzid>],n=<saslname>,r=<client nonce>[,<ext>=<value>...]``: the user's credential is
   looked up, the server answers ``r=<client nonce><server nonce>,s=<salt>,i=<iterations>``;
2. client-final ``c=<binding>,r=<nonce>,p=<proof>``: the nonce must be the combined one and the proof must match the
   stored key; the server answers ``v=<server signature>``.

Kafka's rules kept here: only the ``n`` gs2 flag (no channel binding), an unknown user, fewer iterations than the
mechanism's minimum (4096), a wrong nonce or proof fail as an invalid-credentials ``SaslException`` (the client gets
the generic message), an authorization id other than the user name fails with its own message. Extensions other than
``tokenauth`` are ignored, as Kafka does; delegation tokens (``tokenauth=true``) are not served, so such a client is
treated as an unknown user.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from broker.security.sasl import SaslAuthenticationFailed, SaslIllegalState, SaslInvalidCredentials

__all__ = [
    "MECHANISMS",
    "SCRAM_SHA_256",
    "SCRAM_SHA_512",
    "ScramCredential",
    "ScramMechanism",
    "ScramServer",
    "sasl_name",
    "server_nonce",
    "username_of",
]


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What the broker keeps for one user and mechanism (Kafka's ``ScramCredential``): never the password."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


@dataclass(frozen=True, slots=True)
class ScramMechanism:
    """One SCRAM variant: its SASL name, hash and the iteration bounds Kafka accepts for new credentials."""

    name: str
    hash_name: str
    min_iterations: int = 4096
    max_iterations: int = 16384

    def _hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def _hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        """RFC 5802 ``Hi(Normalize(password), salt, i)``; Kafka applies no SASLprep, nor does this."""
        return hashlib.pbkdf2_hmac(self.hash_name, password.encode("utf-8"), salt, iterations)

    def credential(self, password: str, salt: bytes, iterations: int) -> ScramCredential:
        """The stored form of ``password`` (RFC 5802 StoredKey and ServerKey)."""
        salted = self.salted_password(password, salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        return ScramCredential(
            salt=salt,
            stored_key=self._hash(client_key),
            server_key=self._hmac(salted, b"Server Key"),
            iterations=iterations,
        )

    def credential_from_salted_password(self, salted: bytes, salt: bytes, iterations: int) -> ScramCredential:
        """The stored form from a salted password, as AlterUserScramCredentials upserts carry it."""
        return ScramCredential(
            salt=salt,
            stored_key=self._hash(self._hmac(salted, b"Client Key")),
            server_key=self._hmac(salted, b"Server Key"),
            iterations=iterations,
        )

    def client_key(self, salted: bytes) -> bytes:
        """RFC 5802 ClientKey, which a client XORs with its signature into the proof."""
        return self._hmac(salted, b"Client Key")

    def client_signature(self, stored_key: bytes, auth_message: bytes) -> bytes:
        return self._hmac(stored_key, auth_message)

    def server_signature(self, server_key: bytes, auth_message: bytes) -> bytes:
        return self._hmac(server_key, auth_message)

    def stored_key_from_proof(self, proof: bytes, client_signature: bytes) -> bytes:
        """``H(ClientProof XOR ClientSignature)``: the stored key a correct proof reveals."""
        return self._hash(bytes(a ^ b for a, b in zip(proof, client_signature, strict=True)))


SCRAM_SHA_256 = ScramMechanism("SCRAM-SHA-256", "sha256")
SCRAM_SHA_512 = ScramMechanism("SCRAM-SHA-512", "sha512")
#: The mechanisms Kafka serves, by SASL name.
MECHANISMS = {m.name: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}

# The message grammar Kafka's ScramMessages accepts (RFC 5802 section 7, without channel binding).
_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_PRINTABLE = r"[\x21-\x2B\x2D-\x7E]+"
_VALUE = r"[\x01-\x2B\x2D-\x7F]+"
_BASE64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<extensions>{_EXTENSIONS})"
)
_CLIENT_FINAL = re.compile(rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")


def username_of(saslname: str) -> str:
    """A SCRAM ``saslname`` decoded (``=2C`` is a comma, ``=3D`` an equals sign)."""
    return saslname.replace("=2C", ",").replace("=3D", "=")


def sasl_name(username: str) -> str:
    """A user name encoded as a SCRAM ``saslname``."""
    return username.replace("=", "=3D").replace(",", "=2C")


def server_nonce() -> str:
    """A fresh server nonce as Kafka makes it: 130 random bits written in base 36."""
    value = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while value:
        value, digit = divmod(value, 36)
        out = digits[digit] + out
    return out or "0"


def _extensions(text: str) -> dict[str, str]:
    pairs = (item.split("=", 1) for item in text.split(",") if item)
    return {key: value for key, value in pairs}


class ScramServer:
    """One SCRAM exchange. ``lookup(username)`` gives the user's credential for this mechanism, or None."""

    def __init__(
        self,
        mechanism: ScramMechanism,
        lookup: Callable[[str], ScramCredential | None],
        nonce: Callable[[], str] = server_nonce,
    ) -> None:
        self._mechanism = mechanism
        self._lookup = lookup
        self._nonce = nonce
        self._state = "RECEIVE_CLIENT_FIRST_MESSAGE"
        self._username = ""
        self._credential: ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._combined_nonce = ""
        self.extensions: dict[str, str] = {}

    @property
    def mechanism(self) -> str:
        return self._mechanism.name

    @property
    def complete(self) -> bool:
        return self._state == "COMPLETE"

    @property
    def authorization_id(self) -> str:
        return self._username

    def evaluate(self, response: bytes) -> bytes:
        """Run the step of the current state; any failure ends the exchange (state FAILED)."""
        steps = {"RECEIVE_CLIENT_FIRST_MESSAGE": self._client_first, "RECEIVE_CLIENT_FINAL_MESSAGE": self._client_final}
        step = steps.get(self._state)
        if step is None:
            raise SaslIllegalState(f"Unexpected challenge in Sasl server state {self._state}")
        try:
            challenge = step(response)
        except Exception:
            self._credential = None
            self._state = "FAILED"
            raise
        self._state = "RECEIVE_CLIENT_FINAL_MESSAGE" if step == self._client_first else "COMPLETE"
        return challenge

    def _client_first(self, response: bytes) -> bytes:
        text = response.decode("utf-8", errors="replace")
        match = _CLIENT_FIRST.fullmatch(text)
        if match is None:
            raise SaslInvalidCredentials(f"Invalid SCRAM client first message format: {text}")
        self.extensions = _extensions(match["extensions"])
        self._username = username_of(match["saslname"])
        credential = None if self.extensions.get("tokenauth") == "true" else self._lookup(self._username)
        if credential is None:
            raise SaslInvalidCredentials("Authentication failed: Invalid user credentials")
        authzid = match["authzid"]
        if authzid and username_of(authzid) != self._username:
            raise SaslAuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        if credential.iterations < self._mechanism.min_iterations:
            raise SaslInvalidCredentials(
                f"Iterations {credential.iterations} is less than the minimum "
                f"{self._mechanism.min_iterations} for {self._mechanism.name}"
            )
        self._credential = credential
        # Kafka's client-first-message-bare: from ``n=`` on (a reserved ``m=`` part is not in it).
        self._client_first_bare = text[match.start("saslname") - len("n=") :]
        self._combined_nonce = match["nonce"] + self._nonce()
        salt = base64.b64encode(credential.salt).decode("ascii")
        self._server_first = f"r={self._combined_nonce},s={salt},i={credential.iterations}"
        return self._server_first.encode("ascii")

    def _client_final(self, response: bytes) -> bytes:
        assert self._credential is not None
        text = response.decode("utf-8", errors="replace")
        match = _CLIENT_FINAL.fullmatch(text)
        if match is None:
            raise SaslInvalidCredentials("Authentication failed: Invalid client final message")
        if match["nonce"] != self._combined_nonce:
            raise SaslInvalidCredentials("Invalid client nonce in the final client message.")
        without_proof = text[: match.start("proof") - len(",p=")]
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        try:
            proof = base64.b64decode(match["proof"], validate=True)
            signature = self._mechanism.client_signature(self._credential.stored_key, auth_message)
            computed = self._mechanism.stored_key_from_proof(proof, signature)
        except (binascii.Error, ValueError) as exc:
            raise SaslInvalidCredentials("Sasl client verification failed") from exc
        if not hmac.compare_digest(computed, self._credential.stored_key):
            raise SaslInvalidCredentials("Invalid client credentials")
        server_signature = self._mechanism.server_signature(self._credential.server_key, auth_message)
        self._credential = None
        return b"v=" + base64.b64encode(server_signature)
