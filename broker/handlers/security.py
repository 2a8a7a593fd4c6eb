"""The security APIs the dispatcher serves: SCRAM credential administration, and the SASL APIs outside an exchange.

AlterUserScramCredentials and DescribeUserScramCredentials translate wire fields for
:mod:`broker.security.scram_admin` (Kafka's controller rules) and apply the plan to the
:class:`~broker.security.credential_store.ScramCredentialStore`, durable before the answer; SCRAM logins read the
same store, so a new user can log in as soon as the answer arrives.

SaslHandshake and SaslAuthenticate reach these handlers only where no exchange is expected (a listener without SASL,
or a connection already authenticated that may not re-authenticate now): Kafka's ``KafkaApis`` answers them with
ILLEGAL_SASL_STATE, and so do these. During an exchange the connection's authenticator answers them instead.
"""

from __future__ import annotations

import structlog

from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.security.credential_store import ScramCredentialStore
from broker.security.scram_admin import Deletion, Upsertion, describe_users, plan_alterations
from protocol.errors import ErrorCode
from protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
)
from protocol.messages.describe_user_scram_credentials import (
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse
from protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse
from protocol.registry import ApiKey

__all__ = ["SecurityHandlers"]

log = structlog.get_logger("broker.security")


class SecurityHandlers:
    def __init__(self, credentials: ScramCredentialStore) -> None:
        self._credentials = credentials

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.SASL_HANDSHAKE, self.sasl_handshake, (0, 1))
        d.register(ApiKey.SASL_AUTHENTICATE, self.sasl_authenticate, (0, 2))
        d.register(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, self.describe_user_scram_credentials, (0, 0))
        d.register(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, self.alter_user_scram_credentials, (0, 0))

    async def sasl_handshake(self, ctx: RequestContext, request: SaslHandshakeRequest) -> SaslHandshakeResponse:
        return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])

    async def sasl_authenticate(
        self, ctx: RequestContext, request: SaslAuthenticateRequest
    ) -> SaslAuthenticateResponse:
        return SaslAuthenticateResponse(
            error_code=ErrorCode.ILLEGAL_SASL_STATE,
            error_message="SaslAuthenticate request received after successful authentication",
        )

    async def describe_user_scram_credentials(
        self, ctx: RequestContext, request: DescribeUserScramCredentialsRequest
    ) -> DescribeUserScramCredentialsResponse:
        users = None if request.users is None else [user.name for user in request.users]
        results = describe_users(users, self._credentials.snapshot())
        return DescribeUserScramCredentialsResponse(
            error_code=ErrorCode.NONE,
            error_message="",  # Kafka's describe answers "" where there is no message (its alter answers null)
            results=[
                DescribeUserScramCredentialsResult(
                    user=r.user,
                    error_code=r.error_code,
                    error_message=r.error_message or "",
                    credential_infos=[CredentialInfo(mechanism=m, iterations=i) for m, i in r.credentials],
                )
                for r in results
            ],
        )

    async def alter_user_scram_credentials(
        self, ctx: RequestContext, request: AlterUserScramCredentialsRequest
    ) -> AlterUserScramCredentialsResponse:
        plan = plan_alterations(
            [Deletion(d.name, d.mechanism) for d in request.deletions],
            [Upsertion(u.name, u.mechanism, u.iterations, u.salt, u.salted_password) for u in request.upsertions],
            self._credentials.exists,
        )
        results = [AlterUserScramCredentialsResult(user=r.user, error_code=r.error_code, error_message=r.error_message)
                   for r in plan.results]  # fmt: skip
        try:
            self._credentials.apply(plan)
        except OSError as exc:  # nothing changed: every user planned to succeed learns that it did not
            log.error("security.scram_credentials_write_failed", error=str(exc))  # noqa: TRY400 - one line, no trace
            for result in results:
                if result.error_code == ErrorCode.NONE:
                    result.error_code = ErrorCode.UNKNOWN_SERVER_ERROR
                    result.error_message = f"The SCRAM credentials could not be written: {exc.strerror or exc}"
        return AlterUserScramCredentialsResponse(results=results)
