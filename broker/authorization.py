"""Authorization: the broker's authorizer (Kafka's ``authorizer.class.name``), its persisted ACLs, and the checks
every request passes when one is configured.

:class:`Authorization` owns the sans-IO :class:`~broker.security.authorizer.Authorizer` and its
:class:`~broker.security.acl_store.AclStore`: ACLs are loaded at start, and a CreateAcls or DeleteAcls is durable
before it is answered (the store is written first; a failed write leaves the ACLs in memory unchanged). With no
authorizer configured it holds none, the ACL APIs answer SECURITY_DISABLED, and no check runs at all (the request
guards of ``broker.access`` are installed only with an authorizer, so requests cost what they cost before).

:class:`Access` is one request's view: the principal and host of its connection against the authorizer, with the
operations Kafka's ``AuthHelper`` offers (one resource, a filter over many names, the authorized-operations bit
field of a resource).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from broker.config import STANDARD_AUTHORIZER, BrokerConfig
from broker.context import RequestContext
from broker.security.acl import (
    CLUSTER_NAME,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternFilter,
    ResourceType,
    host_matches,
)
from broker.security.acl_store import AclStore
from broker.security.authorizer import Authorizer, Decision, parse_super_users
from protocol.registry import ApiKey

__all__ = ["SUPPORTED_OPERATIONS", "Access", "AclAdmin", "Authorization"]

log = structlog.get_logger("broker.authorization")

_O = AclOperation
#: Kafka's ``AclEntry.supportedOperations``: what an authorized-operations bit field may hold per resource type.
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        _O.READ,
        _O.WRITE,
        _O.CREATE,
        _O.DESCRIBE,
        _O.DELETE,
        _O.ALTER,
        _O.DESCRIBE_CONFIGS,
        _O.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ResourceType.CLUSTER: (
        _O.CREATE,
        _O.CLUSTER_ACTION,
        _O.DESCRIBE_CONFIGS,
        _O.ALTER_CONFIGS,
        _O.IDEMPOTENT_WRITE,
        _O.ALTER,
        _O.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE, _O.TWO_PHASE_COMMIT),
}


class Authorization:
    """The broker's authorizer (None without ``authorizer.class.name``) and the file its ACLs live in."""

    def __init__(self, config: BrokerConfig, log_dir: Path) -> None:
        #: The decisions, None without an authorizer (then everything is allowed, as in Kafka).
        self.authorizer: Authorizer | None = None
        #: CreateAcls and DeleteAcls, None without an authorizer (SECURITY_DISABLED).
        self.acls: AclAdmin | None = None
        if config["authorizer.class.name"] != STANDARD_AUTHORIZER:
            return
        store = AclStore(log_dir)
        self.authorizer = Authorizer(parse_super_users(config["super.users"]), config["allow.everyone.if.no.acl.found"])
        self.authorizer.add(store.loaded)
        self.acls = AclAdmin(self.authorizer, store)
        log.info(
            "authorization.enabled",
            acls=len(store.loaded),
            super_users=sorted(self.authorizer.super_users),
            allow_everyone_if_no_acl_found=self.authorizer.allow_everyone_if_no_acl_found,
        )


@dataclass(frozen=True, slots=True)
class AclAdmin:
    """Changes to the ACLs, each durable (written to ``store``) before ``authorizer`` applies it."""

    authorizer: Authorizer
    store: AclStore

    def create(self, bindings: Sequence[AclBinding]) -> None:
        """Add ``bindings`` (validated); an ACL that exists already is kept once. Raises OSError, changing
        nothing, if the write fails."""
        existing = set(self.authorizer.bindings())
        new = [b for b in dict.fromkeys(bindings) if b not in existing]
        if not new:
            return
        self.store.save([*self.authorizer.bindings(), *new])
        self.authorizer.add(new)
        for binding in new:
            log.info("authorization.acl_created", **_fields(binding))

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[list[AclBinding]]:
        """What each filter matches, removed. As in Kafka's controller, every filter reports each ACL it matches,
        even one an earlier filter of the request matched too. Raises OSError, changing nothing, if the write
        fails."""
        matched = [self.authorizer.describe(acl_filter) for acl_filter in filters]
        gone = {binding for bindings in matched for binding in bindings}
        if gone:
            self.store.save([b for b in self.authorizer.bindings() if b not in gone])
            for acl_filter in filters:
                self.authorizer.remove(acl_filter)
            for binding in gone:
                log.info("authorization.acl_deleted", **_fields(binding))
        return matched


def _fields(binding: AclBinding) -> dict[str, str]:
    pattern, entry = binding.pattern, binding.entry
    return {
        "resource": f"{pattern.resource_type.name}:{pattern.pattern_type.name}:{pattern.name}",
        "principal": entry.principal,
        "host": entry.host,
        "operation": entry.operation.name,
        "permission": entry.permission.name,
    }


def not_authorized_message(ctx: RequestContext) -> str:
    """The message of a cluster authorization failure a controller API answers (Kafka's names its internal request
    object instead, which no client parses)."""
    return f"Request {ApiKey(ctx.api_key).name} v{ctx.api_version} from {ctx.session.principal} is not authorized."


@dataclass(frozen=True, slots=True)
class Access:
    """What one request may do: its connection's principal and host asked of ``authorizer``."""

    authorizer: Authorizer
    principal: str
    host: str

    @classmethod
    def of(cls, authorizer: Authorizer, ctx: RequestContext) -> Access:
        return cls(authorizer, ctx.session.principal, ctx.session.peer_host)

    def allowed(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        decision = self.authorizer.authorize(self.principal, self.host, operation, resource_type, name)
        if decision is Decision.DENIED:
            log.debug(
                "authorization.denied",
                principal=self.principal,
                host=self.host,
                operation=operation.name,
                resource=f"{resource_type.name}:{name}",
            )
        return decision is Decision.ALLOWED

    def cluster(self, operation: AclOperation) -> bool:
        return self.allowed(operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def allowed_names(self, operation: AclOperation, resource_type: ResourceType, names: Iterable[str]) -> set[str]:
        """The names among ``names`` that ``operation`` is allowed on (each asked once)."""
        return {name for name in set(names) if self.allowed(operation, resource_type, name)}

    def any_allowed(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """Kafka's ``authorizeByResourceType`` (InitProducerId of an idempotent producer asks it for WRITE on any
        topic): a super user, or a resource nobody has ACLs on with ``allow.everyone.if.no.acl.found``, or an ALLOW
        ACL for the principal and host that no DENY ACL covering its pattern cancels."""
        if self.allowed(operation, resource_type, "hardcode"):
            return True
        mine = [
            b
            for b in self.authorizer.describe(AclBindingFilter(ResourcePatternFilter(resource_type)))
            if b.entry.principal in (self.principal, WILDCARD_PRINCIPAL)
            and host_matches(b.entry.host, self.host)
            and b.entry.operation in (operation, AclOperation.ALL)
        ]
        denies = [b.pattern for b in mine if b.entry.permission == AclPermissionType.DENY]
        return any(
            b.entry.permission == AclPermissionType.ALLOW
            and not any(d.applies_to(resource_type, b.pattern.name) for d in denies)
            for b in mine
        )

    def operations(self, resource_type: ResourceType, name: str) -> int:
        """Kafka's ``AuthHelper.authorizedOperations``: the bit field of the supported operations allowed."""
        return self.authorizer.authorized_operations(
            self.principal, self.host, resource_type, name, SUPPORTED_OPERATIONS[resource_type]
        )
