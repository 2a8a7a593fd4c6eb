"""Which (api_key, version) pairs the codec speaks, and the message declarations behind each key.

The ranges are what the real clients negotiate (see the design notes): the codec supports all of them; which ones
the broker *advertises* is the broker's choice, made from what it implements, through `supported_range`.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.declarations import MessageDecl
from protocol.messages.api_table import API_MESSAGES, ApiKey

__all__ = ["APIS", "ApiKey", "ApiSpec", "supported_range"]


@dataclass(frozen=True, slots=True, eq=False)
class ApiSpec:
    """One API: its request/response declarations and the version range the codec supports."""

    key: ApiKey
    request: MessageDecl
    response: MessageDecl
    min_version: int
    max_version: int

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def flexible(self, version: int) -> bool:
        return version in self.request.flexible


#: Where the codec speaks fewer versions than Kafka's schemas define (every other API: all of them), and why.
#: Produce below v3 and Fetch below v4 predate message format v2, the only one the log stores; the newest
#: versions belong to features the broker does not have: Produce v11 (KIP-890 transactions), Fetch v17 (KIP-853
#: directory ids), ListOffsets v9 and v10 (KIP-1005 tiered offsets, KIP-1075 async remote lookups).
_NARROWED: dict[ApiKey, tuple[int, int]] = {
    ApiKey.PRODUCE: (3, 10),
    ApiKey.FETCH: (4, 16),
    ApiKey.LIST_OFFSETS: (0, 8),
}


def _spec(key: ApiKey, request: MessageDecl, response: MessageDecl) -> ApiSpec:
    assert request.valid.hi is not None, key
    lo, hi = _NARROWED.get(key, (request.valid.lo, request.valid.hi))
    assert lo in request.valid and hi in request.valid, (key, lo, hi)
    return ApiSpec(key, request, response, lo, hi)


APIS: dict[int, ApiSpec] = {key: _spec(key, request, response) for key, request, response in API_MESSAGES}


def supported_range(api_key: int) -> tuple[int, int] | None:
    spec = APIS.get(api_key)
    return None if spec is None else (spec.min_version, spec.max_version)
