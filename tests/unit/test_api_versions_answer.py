"""The successful ApiVersions answer is built and encoded once per version, and built again when what it lists
changes (a route registered, the features set); the cached bytes are exactly what encoding it would give."""

from __future__ import annotations

from typing import Any, cast

from broker.context import ConnectionSession, RequestContext
from broker.dispatch import Dispatcher
from broker.features import FeatureLevels
from protocol import api
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.registry import ApiKey


def ctx(version: int) -> RequestContext:
    return RequestContext(ConnectionSession(1, "127.0.0.1", 1), ApiKey.API_VERSIONS, version, 7, "unit")


async def answer(dispatcher: Dispatcher, version: int) -> Any:
    request = ApiVersionsRequest(client_software_name="unit", client_software_version="1")
    return await dispatcher.routes[ApiKey.API_VERSIONS].handler(ctx(version), request)


async def handler(ctx: RequestContext, request: Any) -> Any:
    return None


async def test_the_answer_is_encoded_once_per_version_and_matches_a_full_encoding() -> None:
    dispatcher = Dispatcher()
    for version in range(0, 5):
        body = await answer(dispatcher, version)
        assert await answer(dispatcher, version) is body
        encoded = dispatcher.encoded_api_versions(version, body)
        assert encoded is not None and dispatcher.encoded_api_versions(version, body) is encoded
        assert api.encode_response(ApiKey.API_VERSIONS, version, 42, body)[8:] == encoded


async def test_a_route_or_features_change_rebuilds_the_answer() -> None:
    dispatcher = Dispatcher()
    before = await answer(dispatcher, 3)
    dispatcher.register(ApiKey.HEARTBEAT, handler)
    after = await answer(dispatcher, 3)
    assert after is not before
    assert dispatcher.encoded_api_versions(3, before) is None  # a stale answer is never served from the cache
    assert ApiKey.HEARTBEAT in {v.api_key for v in after.api_keys}
    dispatcher.features = FeatureLevels.for_transactions(2)
    featured = await answer(dispatcher, 3)
    assert featured is not after and featured.finalized_features


async def test_refusals_are_not_cached() -> None:
    dispatcher = Dispatcher()
    bad = ApiVersionsRequest(client_software_name="bad name!", client_software_version="1")
    refusal = await dispatcher.routes[ApiKey.API_VERSIONS].handler(ctx(3), bad)
    assert refusal.error_code != 0
    assert dispatcher.encoded_api_versions(3, refusal) is None
    assert dispatcher.encoded_api_versions(3, cast(Any, object())) is None
