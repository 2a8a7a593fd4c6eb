"""The ACL store: every change durable before it returns, reloaded at start in creation order, a crash mid-write
leaves the old ACLs, and a damaged file is quarantined and reported, never trusted, deleted or silently dropped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from broker.security import acl_store
from broker.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from broker.security.acl_store import FILE_NAME, AclStore

READ_T = AclBinding(
    ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL),
    AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW),
)
DENY_G = AclBinding(
    ResourcePattern(ResourceType.GROUP, "app-", PatternType.PREFIXED),
    AccessControlEntry("User:*", "10.0.0.0/8", AclOperation.ALL, AclPermissionType.DENY),
)


def test_saved_acls_are_loaded_back_in_order(tmp_path: Path) -> None:
    AclStore(tmp_path).save([DENY_G, READ_T])
    store = AclStore(tmp_path)
    assert store.loaded == [DENY_G, READ_T]
    assert store.quarantined == []


def test_no_file_is_no_acls(tmp_path: Path) -> None:
    assert AclStore(tmp_path).loaded == []


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = AclStore(tmp_path)
    store.save([READ_T])

    def failing_write(path: Path, data: bytes) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(acl_store, "atomic_write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        store.save([READ_T, DENY_G])
    assert AclStore(tmp_path).loaded == [READ_T]


_KILLED_WRITER = """
import os, sys
from pathlib import Path
from broker.security import acl_store
from tests.security.test_acl_store import DENY_G, READ_T
real = acl_store.atomic_write
def dying_write(path, data):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data[: len(data) // 2])  # the temp file half written, then the process is killed
    os.kill(os.getpid(), 9)
acl_store.atomic_write = dying_write
acl_store.AclStore(Path(sys.argv[1])).save([READ_T, DENY_G])
"""


def test_a_process_killed_mid_write_leaves_the_previous_acls(tmp_path: Path) -> None:
    AclStore(tmp_path).save([READ_T])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(tmp_path)], env=env, check=False)
    assert killed.returncode == -9
    store = AclStore(tmp_path)
    assert store.loaded == [READ_T]
    assert store.quarantined == []


def _tamper(data: bytes) -> bytes:
    document = json.loads(data)
    document["acls"][0][5] = "WRITE"
    return json.dumps(document).encode()


def _unknown_operation(data: bytes) -> bytes:
    document = json.loads(data)
    document["acls"][0][5] = "FLY"
    document["crc32"] = acl_store._crc(document["acls"])
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[: len(data) // 2], "not an ACL file"),
        (lambda data: b"\xff\xfe garbage", "not an ACL file"),
        (_tamper, "CRC32 mismatch"),
        (_unknown_operation, "not an ACL file"),
        (lambda data: data.replace(b'"version": 1', b'"version": 9'), "unknown version 9"),
        (lambda data: b"[]", "not an ACL file"),
    ],
)
def test_a_damaged_file_is_quarantined_and_reported(
    tmp_path: Path, damage: Callable[[bytes], bytes], reason: str
) -> None:
    AclStore(tmp_path).save([READ_T])
    path = tmp_path / FILE_NAME
    damaged = damage(path.read_bytes())
    path.write_bytes(damaged)
    store = AclStore(tmp_path, clock=lambda: 1234)
    assert store.loaded == []
    [moved] = store.quarantined
    assert reason in moved.reason
    assert moved.original == FILE_NAME
    assert Path(moved.moved_to) == tmp_path / "quarantine" / "broker" / f"1234-{FILE_NAME}"
    assert Path(moved.moved_to).read_bytes() == damaged
    store.save([DENY_G])
    assert AclStore(tmp_path).loaded == [DENY_G]
