"""The ACLs kept on disk (``<log.dir>/__acls.json``), the broker's stand-in for Kafka's metadata log records
``AccessControlEntryRecord`` / ``RemoveAccessControlEntryRecord``.

Every CreateAcls or DeleteAcls rewrites the whole file with write-temp + fsync + rename
(:func:`storage.files.atomic_write`) before it is answered, so after a crash at any point the file holds either the
old or the new ACLs, and an acknowledged change is never lost. The file carries a CRC32 of its ACLs; a file that
does not parse, whose CRC does not match or that names an unknown enum value is moved to
``<log.dir>/quarantine/broker/`` and reported (:attr:`AclStore.quarantined`, Decision 9). The broker then starts
with no ACLs, which with an authorizer means deny-by-default (``allow.everyone.if.no.acl.found`` false), the safe
side, and logs an error so the operator restores the file.

ACLs are written by their enum names (``TOPIC``, ``LITERAL``, ``READ``, ``ALLOW``), so the file is readable and an
operator can review it.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import structlog

from broker.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from storage.clock import Clock, wall_clock_ms
from storage.damage import QuarantinedFile, quarantine_broker_file
from storage.files import atomic_write

__all__ = ["FILE_NAME", "AclStore"]

FILE_NAME = "__acls.json"
_VERSION = 1

log = structlog.get_logger("broker.security.acl_store")


def _row(binding: AclBinding) -> list[str]:
    pattern, entry = binding.pattern, binding.entry
    return [
        pattern.resource_type.name,
        pattern.name,
        pattern.pattern_type.name,
        entry.principal,
        entry.host,
        entry.operation.name,
        entry.permission.name,
    ]


def _crc(rows: list[list[str]]) -> int:
    return zlib.crc32(json.dumps(rows, separators=(",", ":")).encode())


def encode(bindings: Iterable[AclBinding]) -> bytes:
    """The file's bytes for ``bindings`` (in their order)."""
    rows = [_row(b) for b in bindings]
    document = {"version": _VERSION, "crc32": _crc(rows), "acls": rows}
    return (json.dumps(document, indent=1) + "\n").encode()


def _binding(row: Any) -> AclBinding:
    resource_type, name, pattern_type, principal, host, operation, permission = row
    for text in (name, principal, host):
        if not isinstance(text, str):
            raise TypeError(f"not a string: {text!r}")
    return AclBinding(
        ResourcePattern(ResourceType[resource_type], name, PatternType[pattern_type]),
        AccessControlEntry(principal, host, AclOperation[operation], AclPermissionType[permission]),
    )


def decode(data: bytes) -> list[AclBinding]:
    """The ACLs of a file; ValueError (with the reason) for anything damaged or unknown."""
    try:
        document = json.loads(data)
        if document.get("version") != _VERSION:
            raise ValueError(f"unknown version {document.get('version')!r}")
        rows = document["acls"]
        if _crc(rows) != document["crc32"]:
            raise ValueError("CRC32 mismatch")
        return [_binding(row) for row in rows]
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not an ACL file: {exc!r}") from exc


class AclStore:
    """Reads the ACLs once at start (:attr:`loaded`) and rewrites them durably on each change (:meth:`save`)."""

    def __init__(self, log_dir: Path, clock: Clock = wall_clock_ms) -> None:
        self._path = log_dir / FILE_NAME
        #: The ACLs found at start, in the order they were created.
        self.loaded: list[AclBinding] = []
        #: A damaged ACL file moved aside at start (reported like the log's quarantined files).
        self.quarantined: list[QuarantinedFile] = []
        if self._path.exists():
            try:
                self.loaded = decode(self._path.read_bytes())
            except ValueError as exc:
                damaged = str(exc)
            else:
                return
            moved = quarantine_broker_file(self._path, f"ACLs: {damaged}", clock())
            self.quarantined.append(moved)
            log.error("security.acls_quarantined", **moved.as_dict())

    def save(self, bindings: Iterable[AclBinding]) -> None:
        """Replace the stored ACLs by ``bindings``; durable when this returns, the old file kept if it raises."""
        atomic_write(self._path, encode(bindings))
