"""`broker.responses.error_codes` reads only the slots that can hold lists, and finds exactly what walking every slot
of every object found, in the same order, for any response of any API at any version."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.responses import error_codes
from protocol.messages.offset_commit import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from protocol.registry import APIS
from tests.protocol.strategies import all_pairs, message_strategy


def _every_slot(response: Any) -> list[int]:
    """The walk `error_codes` replaced: every slot of every object, breadth first."""
    found: list[int] = []
    stack = [response]
    while stack:
        item = stack.pop(0)
        code = getattr(item, "error_code", None)
        if isinstance(code, int):
            found.append(code)
        for name in getattr(item, "__slots__", ()):
            value = getattr(item, name, None)
            if isinstance(value, list):
                stack.extend(v for v in value if hasattr(v, "__slots__"))
    return found


@pytest.mark.parametrize(("api_key", "version"), all_pairs())
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_same_codes_in_the_same_order_as_walking_every_slot(api_key: int, version: int, data: Any) -> None:
    response = data.draw(message_strategy(APIS[api_key].response, version))
    assert error_codes(response) == _every_slot(response)


def test_partition_codes_follow_the_top_level() -> None:
    answers = [OffsetCommitResponsePartition(partition_index=i, error_code=code) for i, code in enumerate((0, 25))]
    response = OffsetCommitResponse(topics=[OffsetCommitResponseTopic(name="t", partitions=answers)])
    assert error_codes(response) == [0, 25]
