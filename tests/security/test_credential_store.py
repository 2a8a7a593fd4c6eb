"""The SCRAM credential store: durable changes, reload, and a damaged file quarantined and reported (Decision 9)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from broker.security import credential_store
from broker.security.credential_store import FILE_NAME, ScramCredentialStore
from broker.security.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramServer
from broker.security.scram_admin import AlterationPlan, Deletion, Upsertion, plan_alterations
from tests.security.scram_client import ScramClient


def _upsert(store: ScramCredentialStore, user: str, password: str, code: int = 2, iterations: int = 4096) -> None:
    mechanism = SCRAM_SHA_512 if code == 2 else SCRAM_SHA_256
    salt = f"salt-{user}".encode()
    salted = mechanism.salted_password(password, salt, iterations)
    plan = plan_alterations([], [Upsertion(user, code, iterations, salt, salted)], store.exists)
    store.apply(plan)


def test_a_stored_credential_survives_a_restart_and_authenticates(tmp_path: Path) -> None:
    _upsert(ScramCredentialStore(tmp_path), "alice", "secret")
    store = ScramCredentialStore(tmp_path)
    server = ScramServer(SCRAM_SHA_512, lambda user: store.get(user, SCRAM_SHA_512))
    client = ScramClient(SCRAM_SHA_512, "alice", "secret")
    server.evaluate(client.final(server.evaluate(client.first())))
    assert server.complete
    assert store.get("alice", SCRAM_SHA_256) is None
    assert b"secret" not in (tmp_path / FILE_NAME).read_bytes()


def test_deleting_the_last_mechanism_forgets_the_user_across_a_restart(tmp_path: Path) -> None:
    store = ScramCredentialStore(tmp_path)
    _upsert(store, "alice", "a", code=1)
    _upsert(store, "alice", "a", code=2)
    store.apply(plan_alterations([Deletion("alice", 1)], [], store.exists))
    assert set(ScramCredentialStore(tmp_path).snapshot()["alice"]) == {"SCRAM-SHA-512"}
    store.apply(plan_alterations([Deletion("alice", 2)], [], store.exists))
    assert ScramCredentialStore(tmp_path).snapshot() == {}


def test_a_failed_write_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ScramCredentialStore(tmp_path)
    _upsert(store, "alice", "a")

    def failing_write(path: Path, data: bytes) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(credential_store, "atomic_write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        _upsert(store, "bob", "b")
    assert store.get("bob", SCRAM_SHA_512) is None
    assert set(ScramCredentialStore(tmp_path).snapshot()) == {"alice"}


def test_a_temp_file_left_by_a_crash_mid_write_is_ignored(tmp_path: Path) -> None:
    _upsert(ScramCredentialStore(tmp_path), "alice", "a")
    (tmp_path / (FILE_NAME + ".tmp")).write_bytes(b'{"half": ')
    assert set(ScramCredentialStore(tmp_path).snapshot()) == {"alice"}


def _tamper_iterations(data: bytes) -> bytes:
    document = json.loads(data)
    document["users"]["alice"]["SCRAM-SHA-512"]["iterations"] = 4097
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[: len(data) // 2], "not a credentials file"),
        (lambda data: b"\xff\xfe garbage", "not a credentials file"),
        (_tamper_iterations, "CRC32 mismatch"),
        (lambda data: data.replace(b'"version": 1', b'"version": 9'), "unknown version 9"),
        (lambda data: b"[]", "not a credentials file"),
    ],
)
def test_a_damaged_file_is_quarantined_and_reported_never_trusted_or_deleted(
    tmp_path: Path, damage: Callable[[bytes], bytes], reason: str
) -> None:
    _upsert(ScramCredentialStore(tmp_path), "alice", "a")
    path = tmp_path / FILE_NAME
    damaged = damage(path.read_bytes())
    path.write_bytes(damaged)
    store = ScramCredentialStore(tmp_path, clock=lambda: 1234)
    assert store.snapshot() == {}
    [moved] = store.quarantined
    assert reason in moved.reason
    assert moved.original == FILE_NAME
    assert Path(moved.moved_to) == tmp_path / "quarantine" / "broker" / f"1234-{FILE_NAME}"
    assert Path(moved.moved_to).read_bytes() == damaged
    assert not path.exists()
    _upsert(store, "bob", "b")
    assert set(ScramCredentialStore(tmp_path).snapshot()) == {"bob"}


def test_an_empty_plan_writes_nothing(tmp_path: Path) -> None:
    ScramCredentialStore(tmp_path).apply(AlterationPlan())
    assert not (tmp_path / FILE_NAME).exists()
