"""The disk-full helper really produces ENOSPC, and gives the space back."""

from __future__ import annotations

import errno

import pytest

from tests.support.tmpfs import fill, small_tmpfs


def test_a_filled_tmpfs_refuses_writes_until_the_filler_is_removed() -> None:
    with small_tmpfs(1024 * 1024) as root:
        filler = fill(root)
        with pytest.raises(OSError) as refused:
            (root / "more.bin").write_bytes(b"x" * 8192)
        assert refused.value.errno == errno.ENOSPC
        filler.unlink()
        (root / "more.bin").write_bytes(b"x" * 8192)
        assert (root / "more.bin").stat().st_size == 8192
