"""SCRAM credentials kept on disk (``<log.dir>/__scram_credentials.json``), the broker's stand-in for Kafka's
metadata log records ``UserScramCredentialRecord`` / ``RemoveUserScramCredentialRecord``.

Every change is written whole with write-temp + fsync + rename (:func:`storage.files.atomic_write`), so after a
crash at any point the file holds either the old or the new credentials, and a change is acknowledged only once
durable. The file carries a CRC32 of its content: a file that does not parse or whose CRC does not match is moved to
``<log.dir>/quarantine/broker/`` and reported (:attr:`ScramCredentialStore.quarantined`, Decision 9), and the store
starts empty rather than trusting it. Only salts, stored keys, server keys and iteration counts are kept, never a
password.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from pathlib import Path
from typing import Any

import structlog

from broker.security.scram import MECHANISMS, ScramCredential, ScramMechanism
from broker.security.scram_admin import AlterationPlan
from storage.clock import Clock, wall_clock_ms
from storage.damage import QuarantinedFile, quarantine_broker_file
from storage.files import atomic_write

__all__ = ["FILE_NAME", "ScramCredentialStore"]

FILE_NAME = "__scram_credentials.json"
_VERSION = 1

log = structlog.get_logger("broker.security.credential_store")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _encode(users: dict[str, dict[str, ScramCredential]]) -> bytes:
    body = {
        user: {
            mechanism: {
                "salt": _b64(c.salt),
                "stored_key": _b64(c.stored_key),
                "server_key": _b64(c.server_key),
                "iterations": c.iterations,
            }
            for mechanism, c in sorted(mechanisms.items())
        }
        for user, mechanisms in sorted(users.items())
        if mechanisms
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    document = {"version": _VERSION, "crc32": zlib.crc32(canonical.encode()), "users": body}
    return (json.dumps(document, sort_keys=True, indent=1) + "\n").encode()


def _credential(fields: Any) -> ScramCredential:
    return ScramCredential(
        salt=base64.b64decode(fields["salt"], validate=True),
        stored_key=base64.b64decode(fields["stored_key"], validate=True),
        server_key=base64.b64decode(fields["server_key"], validate=True),
        iterations=int(fields["iterations"]),
    )


def _decode(data: bytes) -> dict[str, dict[str, ScramCredential]]:
    """The credentials of a file; ValueError (with the reason) for anything damaged or unknown."""
    try:
        document = json.loads(data)
        body = document["users"]
        if document.get("version") != _VERSION:
            raise ValueError(f"unknown version {document.get('version')!r}")
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
        if zlib.crc32(canonical.encode()) != document["crc32"]:
            raise ValueError("CRC32 mismatch")
        users: dict[str, dict[str, ScramCredential]] = {}
        for user, mechanisms in body.items():
            unknown = set(mechanisms) - set(MECHANISMS)
            if unknown:
                raise ValueError(f"unknown mechanism {sorted(unknown)}")
            users[user] = {name: _credential(fields) for name, fields in mechanisms.items()}
    except (KeyError, TypeError, AttributeError, binascii.Error, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a credentials file: {exc!r}") from exc
    return users


class ScramCredentialStore:
    """The users' SCRAM credentials, loaded at start and rewritten durably on each change."""

    def __init__(self, log_dir: Path, clock: Clock = wall_clock_ms) -> None:
        self._path = log_dir / FILE_NAME
        self._users: dict[str, dict[str, ScramCredential]] = {}
        #: A damaged credentials file moved aside at start (reported like the log's quarantined files).
        self.quarantined: list[QuarantinedFile] = []
        if self._path.exists():
            try:
                self._users = _decode(self._path.read_bytes())
            except ValueError as exc:
                moved = quarantine_broker_file(self._path, f"SCRAM credentials: {exc}", clock())
                self.quarantined.append(moved)
                log.warning("security.scram_credentials_quarantined", **moved.as_dict())

    def get(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """The credential the SCRAM server looks up (``functools.partial(store.get, mechanism=...)``)."""
        return self._users.get(user, {}).get(mechanism.name)

    def exists(self, user: str, mechanism: ScramMechanism) -> bool:
        return self.get(user, mechanism) is not None

    def snapshot(self) -> dict[str, dict[str, ScramCredential]]:
        """A copy of every credential, user -> mechanism name -> credential (for DescribeUserScramCredentials)."""
        return {user: dict(mechanisms) for user, mechanisms in self._users.items() if mechanisms}

    def apply(self, plan: AlterationPlan) -> None:
        """Apply a planned AlterUserScramCredentials; durable when this returns, unchanged if writing fails."""
        if not plan.deletions and not plan.upsertions:
            return
        users = self.snapshot()
        for user, mechanism in plan.deletions:
            users.get(user, {}).pop(mechanism.name, None)
        for user, mechanism, credential in plan.upsertions:
            users.setdefault(user, {})[mechanism.name] = credential
        atomic_write(self._path, _encode(users))
        self._users = {user: mechanisms for user, mechanisms in users.items() if mechanisms}
        for user, mechanism in plan.deletions:
            log.info("security.scram_credential_deleted", user=user, mechanism=mechanism.name)
        for user, mechanism, credential in plan.upsertions:
            log.info(
                "security.scram_credential_set", user=user, mechanism=mechanism.name, iterations=credential.iterations
            )
