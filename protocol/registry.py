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


def _spec(key: ApiKey, request: MessageDecl, response: MessageDecl) -> ApiSpec:
    """Every valid version but an unstable newest one (Kafka's `latestVersionUnstable`, which brokers do not
    advertise)."""
    assert request.valid.hi is not None, key
    hi = request.valid.hi - 1 if request.latest_unstable else request.valid.hi
    return ApiSpec(key, request, response, request.valid.lo, hi)


APIS: dict[int, ApiSpec] = {key: _spec(key, request, response) for key, request, response in API_MESSAGES}


def supported_range(api_key: int) -> tuple[int, int] | None:
    spec = APIS.get(api_key)
    return None if spec is None else (spec.min_version, spec.max_version)
