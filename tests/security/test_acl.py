"""ACL filters as CreateAcls/DescribeAcls/DeleteAcls use them (Kafka's AclBindingFilter.matches) and the checks
Kafka makes before creating an ACL (AclApis, AclControlManager.validateNewAcl), with Kafka's messages."""

from __future__ import annotations

import pytest

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
    host_matches,
    validate_new_binding,
)
from broker.security.authorizer import Authorizer

TOPIC, GROUP = ResourceType.TOPIC, ResourceType.GROUP
LITERAL, PREFIXED, MATCH, ANY = PatternType.LITERAL, PatternType.PREFIXED, PatternType.MATCH, PatternType.ANY
ENTRY = AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)


def binding(name: str, pattern: PatternType = LITERAL, resource: ResourceType = TOPIC) -> AclBinding:
    return AclBinding(ResourcePattern(resource, name, pattern), ENTRY)


@pytest.mark.parametrize(
    ("pattern_filter", "pattern", "matches"),
    [
        (ResourcePatternFilter(), ResourcePattern(TOPIC, "t", LITERAL), True),
        (ResourcePatternFilter(TOPIC), ResourcePattern(GROUP, "t", LITERAL), False),
        (ResourcePatternFilter(TOPIC, "t", LITERAL), ResourcePattern(TOPIC, "t", LITERAL), True),
        (ResourcePatternFilter(TOPIC, "t", LITERAL), ResourcePattern(TOPIC, "t", PREFIXED), False),
        (ResourcePatternFilter(TOPIC, "t", ANY), ResourcePattern(TOPIC, "t", PREFIXED), True),
        (ResourcePatternFilter(TOPIC, "t", ANY), ResourcePattern(TOPIC, "*", LITERAL), False),
        (ResourcePatternFilter(TOPIC, "orders-eu", MATCH), ResourcePattern(TOPIC, "orders-eu", LITERAL), True),
        (ResourcePatternFilter(TOPIC, "orders-eu", MATCH), ResourcePattern(TOPIC, "*", LITERAL), True),
        (ResourcePatternFilter(TOPIC, "orders-eu", MATCH), ResourcePattern(TOPIC, "orders-", PREFIXED), True),
        (ResourcePatternFilter(TOPIC, "orders-eu", MATCH), ResourcePattern(TOPIC, "orders-eu", PREFIXED), True),
        (ResourcePatternFilter(TOPIC, "orders-eu", MATCH), ResourcePattern(TOPIC, "orders-us", PREFIXED), False),
        (ResourcePatternFilter(TOPIC, "orders", MATCH), ResourcePattern(TOPIC, "orders-", PREFIXED), False),
        (ResourcePatternFilter(TOPIC, "*", LITERAL), ResourcePattern(TOPIC, "*", LITERAL), True),
        (ResourcePatternFilter(TOPIC, None, PREFIXED), ResourcePattern(TOPIC, "x", PREFIXED), True),
        (ResourcePatternFilter(TOPIC, None, PREFIXED), ResourcePattern(TOPIC, "x", LITERAL), False),
    ],
)
def test_resource_pattern_filters(
    pattern_filter: ResourcePatternFilter, pattern: ResourcePattern, matches: bool
) -> None:
    assert pattern_filter.matches(pattern) is matches


@pytest.mark.parametrize(
    ("entry_filter", "matches"),
    [
        (AccessControlEntryFilter(), True),
        (AccessControlEntryFilter(principal="User:alice"), True),
        (AccessControlEntryFilter(principal="User:*"), False),
        (AccessControlEntryFilter(host="*"), True),
        (AccessControlEntryFilter(host="1.1.1.1"), False),
        (AccessControlEntryFilter(operation=AclOperation.READ), True),
        (AccessControlEntryFilter(operation=AclOperation.ALL), False),
        (AccessControlEntryFilter(permission=AclPermissionType.DENY), False),
        (AccessControlEntryFilter(permission=AclPermissionType.ALLOW), True),
    ],
)
def test_entry_filters_match_exact_values_and_treat_none_and_any_as_everything(
    entry_filter: AccessControlEntryFilter, matches: bool
) -> None:
    assert entry_filter.matches(ENTRY) is matches


def test_describe_and_delete_use_the_filter_and_creating_twice_keeps_one() -> None:
    authorizer = Authorizer()
    bindings = [binding("a"), binding("a-", PREFIXED), binding("*"), binding("g", resource=GROUP)]
    assert authorizer.add([*bindings, bindings[0]]) == bindings
    assert authorizer.add([bindings[0]]) == []
    match_a = AclBindingFilter(ResourcePatternFilter(TOPIC, "a-1", MATCH))
    assert authorizer.describe(match_a) == [bindings[1], bindings[2]]
    assert authorizer.remove(AclBindingFilter(ResourcePatternFilter(TOPIC))) == bindings[:3]
    assert authorizer.bindings() == [bindings[3]]
    assert authorizer.remove(AclBindingFilter()) == [bindings[3]]
    assert authorizer.describe(AclBindingFilter()) == []


def _acl(
    resource: ResourceType = TOPIC,
    name: str = "t",
    pattern: PatternType = LITERAL,
    principal: str = "User:alice",
    host: str = "*",
    operation: AclOperation = AclOperation.READ,
    permission: AclPermissionType = AclPermissionType.ALLOW,
) -> AclBinding:
    return AclBinding(
        ResourcePattern(resource, name, pattern), AccessControlEntry(principal, host, operation, permission)
    )


@pytest.mark.parametrize(
    ("candidate", "error"),
    [
        (_acl(ResourceType.CLUSTER, "c"), "The only valid name for the CLUSTER resource is kafka-cluster"),
        (_acl(name=""), "Invalid empty resource name"),
        (_acl(ResourceType.ANY), "Invalid resourceType ANY"),
        (_acl(ResourceType.UNKNOWN), "Invalid resourceType UNKNOWN"),
        (_acl(pattern=MATCH), "Invalid patternType MATCH"),
        (_acl(pattern=ANY), "Invalid patternType ANY"),
        (_acl(operation=AclOperation.ANY), "Invalid operation ANY"),
        (_acl(permission=AclPermissionType.ANY), "Invalid permissionType ANY"),
        (
            _acl(principal="alice"),
            "Could not parse principal from `alice` (no colon is present separating the principal type from the "
            "principal name)",
        ),
        (_acl(host=""), "Host pattern cannot be null or empty"),
        (_acl(host="10.0.0.0/33"), "Invalid CIDR notation '10.0.0.0/33': Value [33] not in range [0,32]"),
    ],
)
def test_kafkas_refusals_of_new_acls(candidate: AclBinding, error: str) -> None:
    with pytest.raises(InvalidAcl) as failure:
        validate_new_binding(candidate)
    assert str(failure.value).startswith(error)


@pytest.mark.parametrize(
    "candidate",
    [
        _acl(ResourceType.CLUSTER, "kafka-cluster"),
        _acl(name="*"),
        _acl(pattern=PREFIXED, operation=AclOperation.ALL, permission=AclPermissionType.DENY),
        _acl(principal="User:*", host="10.0.0.0/8"),
    ],
)
def test_valid_acls_pass(candidate: AclBinding) -> None:
    validate_new_binding(candidate)


@pytest.mark.parametrize(
    ("acl_host", "host", "matches"),
    [
        ("*", "1.2.3.4", True),
        ("1.2.3.4", "1.2.3.4", True),
        ("1.2.3.4", "1.2.3.5", False),
        ("1.2.3.0/24", "1.2.3.5", True),
        ("::1/128", "::1", True),
        ("1.2.3.0/24", "::1", False),
        ("bad/24", "1.2.3.5", False),
    ],
)
def test_host_matching(acl_host: str, host: str, matches: bool) -> None:
    assert host_matches(acl_host, host) is matches
