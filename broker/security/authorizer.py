"""The ACL decision with the semantics of Kafka's ``StandardAuthorizer`` (``authorizer.class.name`` set to it).

A request by ``principal`` from ``host`` to do ``operation`` on a resource is decided so:

1. a super user (``super.users``, ``User:admin;User:ops``) may do everything;
2. the ACLs that apply to the resource are those of its type whose pattern covers its name (LITERAL name, LITERAL
   ``*``, PREFIXED prefix of the name);
3. of those, an ACL counts if its principal is the caller's or ``User:*``, its host is the caller's, ``*`` or a CIDR
   range holding it, and its operation is the one asked or ALL; an ALLOW of READ, WRITE, DELETE or ALTER also
   grants DESCRIBE, an ALLOW of ALTER_CONFIGS also grants DESCRIBE_CONFIGS (DENY ACLs imply nothing);
4. any counting DENY denies (DENY wins), else any counting ALLOW allows;
5. no ACL counts: denied, unless no ACL at all applies to the resource and ``allow.everyone.if.no.acl.found`` is
   true.

:class:`Authorizer` keeps the ACLs in memory (the wiring persists them and replays them on start) and answers
CreateAcls, DescribeAcls and DeleteAcls as well as the per-request checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from broker.security.acl import (
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourceType,
    host_matches,
)

__all__ = ["IMPLIED_BY", "Authorizer", "Decision", "parse_super_users"]


class Decision(Enum):
    ALLOWED = "ALLOWED"
    DENIED = "DENIED"


#: The operations an ALLOW ACL of another operation grants as well.
IMPLIED_BY: dict[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset(
        {AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE}
    ),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS}),
}


def parse_super_users(value: str) -> frozenset[str]:
    """``super.users``: principals separated by semicolons (``User:admin;User:ops``), blanks trimmed."""
    return frozenset(part.strip() for part in value.split(";") if part.strip())


def _counts(binding: AclBinding, principals: tuple[str, str], host: str, operation: AclOperation) -> bool:
    """Whether ``binding`` (already known to apply to the resource) decides this request (``findResult``)."""
    entry = binding.entry
    if entry.principal not in principals or not host_matches(entry.host, host):
        return False
    if entry.operation == AclOperation.ALL:
        return True
    if entry.permission == AclPermissionType.ALLOW:
        return entry.operation in IMPLIED_BY.get(operation, frozenset({operation}))
    return entry.operation == operation


@dataclass(slots=True)
class Authorizer:
    """ACLs plus ``super.users`` and ``allow.everyone.if.no.acl.found``; every method is pure computation."""

    super_users: frozenset[str] = frozenset()
    allow_everyone_if_no_acl_found: bool = False
    #: The bindings in the order they were added (a dict as an ordered set).
    _bindings: dict[AclBinding, None] = field(default_factory=dict, init=False, repr=False)

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> Decision:
        """The decision for ``principal`` (``User:alice``) from ``host`` doing ``operation`` on a resource."""
        if principal in self.super_users:
            return Decision.ALLOWED
        applying = [b for b in self._bindings if b.pattern.applies_to(resource_type, name)]
        principals = (principal, WILDCARD_PRINCIPAL)
        counting = [b for b in applying if _counts(b, principals, host, operation)]
        if any(b.entry.permission == AclPermissionType.DENY for b in counting):
            return Decision.DENIED
        if counting:
            return Decision.ALLOWED
        if not applying and self.allow_everyone_if_no_acl_found:
            return Decision.ALLOWED
        return Decision.DENIED

    def authorized_operations(
        self, principal: str, host: str, resource_type: ResourceType, name: str, supported: Iterable[AclOperation]
    ) -> int:
        """The ``authorized_operations`` bit field of Metadata and DescribeGroups: the ``supported`` ones allowed."""
        field = 0
        for operation in supported:
            if self.authorize(principal, host, operation, resource_type, name) is Decision.ALLOWED:
                field |= 1 << operation
        return field

    def add(self, bindings: Sequence[AclBinding]) -> list[AclBinding]:
        """Add ``bindings`` (validated by the caller); an existing one is kept once. Returns those new."""
        added = [b for b in dict.fromkeys(bindings) if b not in self._bindings]
        self._bindings.update(dict.fromkeys(added))
        return added

    def describe(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        """The bindings ``acl_filter`` matches, in the order they were added (DescribeAcls)."""
        return [b for b in self._bindings if acl_filter.matches(b)]

    def remove(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        """Remove and return the bindings ``acl_filter`` matches (one DeleteAcls filter)."""
        removed = self.describe(acl_filter)
        for binding in removed:
            del self._bindings[binding]
        return removed

    def bindings(self) -> list[AclBinding]:
        """Every binding, for persisting."""
        return list(self._bindings)
