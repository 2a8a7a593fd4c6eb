"""String fields decode leniently, like Java's `new String(bytes, UTF_8)`: malformed bytes become U+FFFD."""

from __future__ import annotations

from io import BytesIO

import pytest

from protocol.primitives import rd_string


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"caf\xe9", "caf\ufffd"),  # Latin-1 é: a lone lead byte
        (b"\xff\xfe", "\ufffd\ufffd"),  # bytes that never occur in UTF-8
        (b"a\xe2\x82", "a\ufffd"),  # a truncated 3-byte sequence is one replacement, as in Java
        (b"ok \xe2\x82\xac", "ok \u20ac"),  # valid UTF-8 is untouched
    ],
)
@pytest.mark.parametrize("compact", [False, True])
def test_malformed_utf8_is_replaced_not_refused(raw: bytes, expected: str, compact: bool) -> None:
    prefix = bytes([len(raw) + 1]) if compact else len(raw).to_bytes(2, "big")
    io = BytesIO(prefix + raw + b"rest")
    assert rd_string(io, compact, False, "group_id") == expected
    assert io.read() == b"rest"  # exactly the string's bytes were consumed
