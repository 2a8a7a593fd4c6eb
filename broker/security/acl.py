"""ACL bindings and the filters CreateAcls, DescribeAcls and DeleteAcls carry, with Kafka's codes and rules.

The enums use Kafka's wire codes (``ResourceType``, ``PatternType``, ``AclOperation``, ``AclPermissionType``), so
a handler converts request fields with ``ResourceType(code)``. A filter matches bindings as Kafka's
``AclBindingFilter.matches`` does: ``ANY`` and a missing (null) name, principal or host match everything; the
``MATCH`` pattern type matches every pattern that would apply to the named resource (the literal name, the literal
wildcard ``*`` and every prefix of it). :func:`validate_new_binding` is what Kafka checks before creating an ACL,
with its messages (INVALID_REQUEST).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "CLUSTER_NAME",
    "WILDCARD",
    "WILDCARD_PRINCIPAL",
    "AccessControlEntry",
    "AccessControlEntryFilter",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "InvalidAcl",
    "PatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "host_matches",
    "validate_new_binding",
]

#: The literal resource name and host that match every name and host.
WILDCARD = "*"
#: The principal that matches every user.
WILDCARD_PRINCIPAL = "User:*"
#: The one name a CLUSTER resource has.
CLUSTER_NAME = "kafka-cluster"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    """What an ACL applies to: a resource type and a LITERAL name (``*`` for all) or a PREFIXED name."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def applies_to(self, resource_type: ResourceType, name: str) -> bool:
        """Whether this pattern covers the resource ``name`` of ``resource_type`` (what the authorizer asks)."""
        if resource_type != self.resource_type:
            return False
        if self.pattern_type == PatternType.PREFIXED:
            return name.startswith(self.name)
        return self.pattern_type == PatternType.LITERAL and self.name in (name, WILDCARD)


@dataclass(frozen=True, slots=True)
class AccessControlEntry:
    """Who may or may not do what from where: ``User:alice`` from ``*`` may READ."""

    principal: str
    host: str
    operation: AclOperation
    permission: AclPermissionType


@dataclass(frozen=True, slots=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry


@dataclass(frozen=True, slots=True)
class ResourcePatternFilter:
    """The resource part of a filter; ``name`` None matches every name."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type not in (ResourceType.ANY, pattern.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, pattern.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        # MATCH: the patterns that would apply to a resource of this name.
        if pattern.pattern_type == PatternType.LITERAL:
            return pattern.name in (self.name, WILDCARD)
        return pattern.pattern_type == PatternType.PREFIXED and self.name.startswith(pattern.name)


@dataclass(frozen=True, slots=True)
class AccessControlEntryFilter:
    """The entry part of a filter; None and ANY match everything."""

    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission: AclPermissionType = AclPermissionType.ANY

    def matches(self, entry: AccessControlEntry) -> bool:
        return (
            self.principal in (None, entry.principal)
            and self.host in (None, entry.host)
            and self.operation in (AclOperation.ANY, entry.operation)
            and self.permission in (AclPermissionType.ANY, entry.permission)
        )


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """A DescribeAcls or DeleteAcls filter; the default matches every binding."""

    pattern: ResourcePatternFilter = ResourcePatternFilter()
    entry: AccessControlEntryFilter = AccessControlEntryFilter()

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern.matches(binding.pattern) and self.entry.matches(binding.entry)


def host_matches(acl_host: str, host: str) -> bool:
    """Kafka 4.4's host rule: ``*``, the same address, or a CIDR range (``10.0.0.0/8``) holding it."""
    if acl_host in (WILDCARD, host):
        return True
    if "/" not in acl_host:
        return False
    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network(acl_host, strict=False)
    except ValueError:
        return False


class InvalidAcl(ValueError):
    """A binding CreateAcls refuses with INVALID_REQUEST; the message is Kafka's."""


def validate_new_binding(binding: AclBinding) -> None:
    """Kafka's checks before creating an ACL (the broker's ``AclApis`` then the controller's ``AclControlManager``)."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type == ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        raise InvalidAcl(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if not pattern.name:
        raise InvalidAcl("Invalid empty resource name")
    if pattern.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise InvalidAcl(f"Invalid resourceType {pattern.resource_type.name}")
    if pattern.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise InvalidAcl(f"Invalid patternType {pattern.pattern_type.name}")
    if entry.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise InvalidAcl(f"Invalid operation {entry.operation.name}")
    if entry.permission not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        raise InvalidAcl(f"Invalid permissionType {entry.permission.name}")
    if ":" not in entry.principal:
        raise InvalidAcl(
            f"Could not parse principal from `{entry.principal}` "
            "(no colon is present separating the principal type from the principal name)"
        )
    if not entry.host:
        raise InvalidAcl("Host pattern cannot be null or empty")
    if "/" in entry.host:
        try:
            ipaddress.ip_network(entry.host, strict=False)
        except ValueError as exc:
            raise InvalidAcl(f"Invalid CIDR notation '{entry.host}': {_cidr_problem(entry.host, exc)}") from exc


def _cidr_problem(host: str, exc: ValueError) -> str:
    """Kafka's reason for a prefix length out of range (``Value [33] not in range [0,32]``), else Python's."""
    address, _, prefix = host.partition("/")
    try:
        bits = ipaddress.ip_address(address).max_prefixlen
    except ValueError:
        return str(exc)
    if prefix.isdigit() and int(prefix) > bits:
        return f"Value [{prefix}] not in range [0,{bits}]"
    return str(exc)
