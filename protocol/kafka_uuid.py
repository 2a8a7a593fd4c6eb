"""Kafka's textual form of a UUID (`Uuid.toString`): URL-safe base64 of the 16 bytes without padding.

Topic ids travel as 16 raw bytes on the wire; everywhere a person or a log reads them (kafka-topics.sh, the
coordinator's assignments keyed by topic id, dump-log) Kafka spells them in this 22-character form.
"""

from __future__ import annotations

import base64
import uuid


def kafka_uuid_to_str(value: uuid.UUID) -> str:
    """Kafka's textual UUID: URL-safe base64 of the 16 bytes without padding (22 characters)."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def kafka_uuid_from_str(text: str) -> uuid.UUID:
    """The UUID a `kafka_uuid_to_str` string names; ValueError for anything else."""
    raw = base64.urlsafe_b64decode(text + "==")
    if len(raw) != 16:
        raise ValueError(f"not a Kafka UUID: {text!r}")
    return uuid.UUID(bytes=raw)
