"""A minimal SCRAM client (RFC 5802) for driving the server in tests."""

from __future__ import annotations

import base64

from broker.security.scram import ScramMechanism, sasl_name


class ScramClient:
    """Builds the two client messages for ``username``/``password`` with a fixed client nonce."""

    def __init__(self, mechanism: ScramMechanism, username: str, password: str, nonce: str = "clientnonce") -> None:
        self.mechanism = mechanism
        self.password = password
        self.first_bare = f"n={sasl_name(username)},r={nonce}"

    def first(self, authzid: str = "", extensions: str = "") -> bytes:
        gs2 = f"n,a={sasl_name(authzid)}," if authzid else "n,,"
        return f"{gs2}{self.first_bare}{extensions}".encode()

    def final(self, server_first: bytes, nonce: str | None = None, password: str | None = None) -> bytes:
        fields = dict(item.split("=", 1) for item in server_first.decode().split(","))
        salt, iterations = base64.b64decode(fields["s"]), int(fields["i"])
        without_proof = f"c=biws,r={nonce if nonce is not None else fields['r']}"
        credential = self.mechanism.credential(password or self.password, salt, iterations)
        salted = self.mechanism.salted_password(password or self.password, salt, iterations)
        client_key = self.mechanism._hmac(salted, b"Client Key")
        auth_message = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        signature = self.mechanism.client_signature(credential.stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
