"""`encode_response_parts`: a bytes field may hold a deferred payload; the parts, joined with its bytes, are exactly
the frame `encode_response` builds from the bytes themselves (size prefix included)."""

from __future__ import annotations

import uuid

from protocol import api
from protocol.messages.fetch import FetchableTopicResponse, FetchResponse, PartitionData
from protocol.registry import ApiKey


class Deferred:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)


def response(first: object, second: object) -> FetchResponse:
    partitions = [
        PartitionData(partition_index=0, high_watermark=5, records=first),  # type: ignore[arg-type]
        PartitionData(partition_index=1, high_watermark=7, records=second),  # type: ignore[arg-type]
    ]
    return FetchResponse(
        responses=[FetchableTopicResponse(topic="t", topic_id=uuid.UUID(int=1), partitions=partitions)]
    )


def test_parts_joined_are_the_plain_frame_for_every_fetch_version() -> None:
    one, two = b"a" * 300, b"b" * 70_000  # 70 000 needs a 3-byte uvarint length in flexible versions
    for version in range(4, 17):
        plain = api.encode_response(ApiKey.FETCH, version, 9, response(one, two))
        parts = api.encode_response_parts(ApiKey.FETCH, version, 9, response(Deferred(one), Deferred(two)))
        kinds = [type(p) for p in parts]
        assert kinds[:4] == [bytes, Deferred, bytes, Deferred] and kinds[4:] in ([], [bytes])  # v4-v11 end in records
        joined = b"".join(p if isinstance(p, bytes) else p.data for p in parts)
        assert joined == plain, version


def test_without_deferred_payloads_there_is_one_part() -> None:
    plain = api.encode_response(ApiKey.FETCH, 12, 3, response(b"x", None))
    assert api.encode_response_parts(ApiKey.FETCH, 12, 3, response(b"x", None)) == [plain]
