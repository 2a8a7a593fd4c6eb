"""CreateAcls, DescribeAcls and DeleteAcls (v1-3, what Kafka 4.4 serves), as Kafka's ``AclApis`` answers them.

- No authorizer configured: SECURITY_DISABLED, with Kafka's messages, on every creation, every filter, or the
  DescribeAcls answer.
- The caller must be allowed ALTER on the cluster (CreateAcls, DeleteAcls) or DESCRIBE (DescribeAcls), else every
  result (or the DescribeAcls answer) is CLUSTER_AUTHORIZATION_FAILED. Kafka checks this before looking for an
  authorizer, which without one allows everything, so the order does not show.
- A request naming an UNKNOWN resource type, pattern type, operation or permission (code 0 or a code Kafka does not
  know) does not parse in Kafka (``CreateAclsRequest.validate``, ``DescribeAclsRequest.normalizeAndValidate``) and
  the connection is closed, as here.
- A creation naming ANY (resource type, operation, permission) or the ANY/MATCH pattern type cannot be built by
  Kafka's ``ResourcePattern``/``AccessControlEntry``: the whole request answers UNKNOWN_SERVER_ERROR.
- A creation that Kafka's broker or controller refuses is INVALID_REQUEST with Kafka's message, the others of the
  request are created; the ACLs are durable (``broker.authorization``) before the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import TypeVar

import structlog

from broker.authorization import Access, Authorization, not_authorized_message
from broker.connection import CloseConnection
from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    InvalidAcl,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    validate_new_binding,
)
from protocol.errors import ErrorCode
from protocol.messages.create_acls import AclCreation, AclCreationResult, CreateAclsRequest, CreateAclsResponse
from protocol.messages.delete_acls import (
    DeleteAclsFilter,
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsRequest,
    DeleteAclsResponse,
)
from protocol.messages.describe_acls import (
    AclDescription,
    DescribeAclsRequest,
    DescribeAclsResource,
    DescribeAclsResponse,
)
from protocol.registry import ApiKey

__all__ = ["AclHandlers"]

log = structlog.get_logger("broker.handlers.acls")

#: Kafka's messages when no authorizer is configured (DescribeAcls says more than the other two).
NO_AUTHORIZER = "No Authorizer is configured."
NO_AUTHORIZER_DESCRIBE = "No Authorizer is configured on the broker"
#: The versions Kafka 4.4 serves (v0, before prefixed patterns, was removed in Kafka 4.0).
VERSIONS = (1, 3)

E = TypeVar("E", bound=IntEnum)


def _known(enum: type[E], code: int, what: str) -> E:
    """``code`` as ``enum``; UNKNOWN (0) or a code Kafka does not know closes the connection, as Kafka's parse."""
    try:
        value = enum(code)
    except ValueError:
        value = enum(0)
    if value == 0:
        raise CloseConnection(f"{what} contains an UNKNOWN element (code {code})")
    return value


def _binding(creation: AclCreation) -> AclBinding:
    return AclBinding(
        ResourcePattern(
            _known(ResourceType, creation.resource_type, "CreateAcls"),
            creation.resource_name,
            _known(PatternType, creation.resource_pattern_type, "CreateAcls"),
        ),
        AccessControlEntry(
            creation.principal,
            creation.host,
            _known(AclOperation, creation.operation, "CreateAcls"),
            _known(AclPermissionType, creation.permission_type, "CreateAcls"),
        ),
    )


def _not_constructible(binding: AclBinding) -> bool:
    """A binding Kafka cannot even build: ANY where a creation needs a specific value (or the MATCH pattern)."""
    pattern, entry = binding.pattern, binding.entry
    return (
        pattern.resource_type == ResourceType.ANY
        or pattern.pattern_type in (PatternType.ANY, PatternType.MATCH)
        or entry.operation == AclOperation.ANY
        or entry.permission == AclPermissionType.ANY
    )


def _filter(f: DescribeAclsRequest | DeleteAclsFilter, what: str) -> AclBindingFilter:
    return AclBindingFilter(
        ResourcePatternFilter(
            _known(ResourceType, f.resource_type_filter, what),
            f.resource_name_filter,
            _known(PatternType, f.pattern_type_filter, what),
        ),
        AccessControlEntryFilter(
            f.principal_filter,
            f.host_filter,
            _known(AclOperation, f.operation, what),
            _known(AclPermissionType, f.permission_type, what),
        ),
    )


class AclHandlers:
    def __init__(self, authorization: Authorization) -> None:
        self._authorization = authorization

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.CREATE_ACLS, self.create_acls, VERSIONS)
        d.register(ApiKey.DESCRIBE_ACLS, self.describe_acls, VERSIONS)
        d.register(ApiKey.DELETE_ACLS, self.delete_acls, VERSIONS)

    def _refusal(self, ctx: RequestContext, operation: AclOperation) -> tuple[ErrorCode, str] | None:
        """Why the request is refused as a whole (cluster authorization, then no authorizer), or None."""
        authorizer = self._authorization.authorizer
        if authorizer is None:
            return ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER
        if not Access.of(authorizer, ctx).cluster(operation):
            return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, not_authorized_message(ctx)
        return None

    async def create_acls(self, ctx: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse:
        bindings = [_binding(c) for c in request.creations]
        refusal = self._refusal(ctx, AclOperation.ALTER)
        admin = self._authorization.acls
        if refusal is not None or admin is None:
            code, message = refusal or (ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
            return CreateAclsResponse(
                results=[AclCreationResult(error_code=code, error_message=message) for _ in bindings]
            )
        if any(_not_constructible(b) for b in bindings):
            # Kafka's ResourcePattern and AccessControlEntry constructors throw on these before any check, and the
            # whole request answers UNKNOWN_SERVER_ERROR (KafkaApis' handleError).
            return CreateAclsResponse(
                results=[
                    AclCreationResult(error_code=ErrorCode.UNKNOWN_SERVER_ERROR, error_message=None) for _ in bindings
                ]
            )
        results = [AclCreationResult() for _ in bindings]
        valid = []
        for binding, result in zip(bindings, results, strict=True):
            try:
                validate_new_binding(binding)
            except InvalidAcl as exc:
                result.error_code, result.error_message = ErrorCode.INVALID_REQUEST, str(exc)
            else:
                valid.append(binding)
        _durably(lambda: admin.create(valid), results)
        return CreateAclsResponse(results=results)

    async def describe_acls(self, ctx: RequestContext, request: DescribeAclsRequest) -> DescribeAclsResponse:
        acl_filter = _filter(request, "DescribeAcls")
        authorizer = self._authorization.authorizer
        refusal = self._refusal(ctx, AclOperation.DESCRIBE)
        if refusal is not None or authorizer is None:
            code, message = refusal or (ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
            if code == ErrorCode.SECURITY_DISABLED:
                message = NO_AUTHORIZER_DESCRIBE
            return DescribeAclsResponse(error_code=code, error_message=message)
        return DescribeAclsResponse(resources=_by_resource(authorizer.describe(acl_filter)))

    async def delete_acls(self, ctx: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse:
        filters = [_filter(f, "DeleteAcls") for f in request.filters]
        refusal = self._refusal(ctx, AclOperation.ALTER)
        admin = self._authorization.acls
        if refusal is not None or admin is None:
            code, message = refusal or (ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
            return DeleteAclsResponse(
                filter_results=[DeleteAclsFilterResult(error_code=code, error_message=message) for _ in filters]
            )
        results = [DeleteAclsFilterResult(error_message=None) for _ in filters]
        matched: list[list[AclBinding]] = []

        def delete() -> None:
            matched.extend(admin.delete(filters))

        if _durably(delete, results):
            for result, bindings in zip(results, matched, strict=True):
                result.matching_acls = [_matching(b) for b in bindings]
        return DeleteAclsResponse(filter_results=results)


Result = AclCreationResult | DeleteAclsFilterResult


def _durably(change: Callable[[], None], results: Sequence[Result]) -> bool:
    """Apply ``change``; if the ACL file cannot be written, every result not already failed is
    UNKNOWN_SERVER_ERROR (nothing changed), as Kafka answers a failed controller write. Whether it applied."""
    try:
        change()
    except OSError as exc:
        log.exception("authorization.acls_write_failed", error=str(exc))
        for result in results:
            if result.error_code == ErrorCode.NONE:
                result.error_code, result.error_message = ErrorCode.UNKNOWN_SERVER_ERROR, None
        return False
    return True


def _by_resource(bindings: list[AclBinding]) -> list[DescribeAclsResource]:
    """Kafka's ``DescribeAclsResponse.aclsResources``: the bindings grouped by resource pattern."""
    resources: dict[ResourcePattern, DescribeAclsResource] = {}
    for binding in bindings:
        pattern, entry = binding.pattern, binding.entry
        resource = resources.get(pattern)
        if resource is None:
            resource = resources[pattern] = DescribeAclsResource(
                resource_type=pattern.resource_type, resource_name=pattern.name, pattern_type=pattern.pattern_type
            )
        resource.acls.append(
            AclDescription(
                principal=entry.principal, host=entry.host, operation=entry.operation, permission_type=entry.permission
            )
        )
    return list(resources.values())


def _matching(binding: AclBinding) -> DeleteAclsMatchingAcl:
    pattern, entry = binding.pattern, binding.entry
    return DeleteAclsMatchingAcl(
        error_message=None,
        resource_type=pattern.resource_type,
        resource_name=pattern.name,
        pattern_type=pattern.pattern_type,
        principal=entry.principal,
        host=entry.host,
        operation=entry.operation,
        permission_type=entry.permission,
    )
