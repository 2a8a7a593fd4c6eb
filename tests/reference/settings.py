"""The group settings both brokers get when they are compared: Kafka's names, values Kafka accepts.

Timeouts are scaled down so timeline scenarios run in real time in seconds (Kafka has no virtual time), but stay above
Kafka's own floors; the initial delay is kept non-zero so KIP-134's
delay is observable on both."""

from __future__ import annotations

SHARED_GROUP_SETTINGS: dict[str, str] = {
    "group.initial.rebalance.delay.ms": "300",
    "group.min.session.timeout.ms": "100",
    "group.max.session.timeout.ms": "30000",
    "group.max.size": "5",
    "offsets.topic.num.partitions": "10",
    "num.partitions": "3",
    "auto.create.topics.enable": "false",
}

#: For the retention scenario (#36) only, on a pair of brokers of its own: retention at Kafka's floor of one minute,
#: checked every second. Not in the shared settings, because every check also removes Empty groups that have no
#: offsets left, which would race with the other scenarios' looks at their Empty groups.
RETENTION_SETTINGS: dict[str, str] = {
    **SHARED_GROUP_SETTINGS,
    "offsets.retention.minutes": "1",
    "offsets.retention.check.interval.ms": "1000",
}

#: For the KIP-848 session-timeout scenario only, on a pair of brokers of its own: a consumer-protocol session of
#: 1.5 s (Kafka's default is 45 s, with a floor of 45 s too) and a heartbeat interval below it, as Kafka requires.
CONSUMER_SESSION_SETTINGS: dict[str, str] = {
    **SHARED_GROUP_SETTINGS,
    "group.consumer.session.timeout.ms": "1500",
    "group.consumer.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
}

#: For the KIP-890 scenario that sends a transactional Produce v11, on a pair of brokers of its own. Kafka's partition
#: leader batches the verifications bound for one coordinator node and answers the whole batch in the mode of the
#: Produce that opened the batch (AddPartitionsToTxnManager's `operationExpected`), so another scenario's older
#: transactional Produce at the same moment turns this one's TRANSACTION_ABORTABLE into INVALID_TXN_STATE. The
#: setting is Kafka's default, named only so that the pair is this scenario's alone.
TXN_VERIFICATION_SETTINGS: dict[str, str] = {
    **SHARED_GROUP_SETTINGS,
    "transaction.partition.verification.enable": "true",
}

#: Kafka's KRaft ACL authorizer, which group-broker serves under the same class name.
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def authorizer_settings(super_users: str = "", allow_everyone_if_no_acl_found: bool = True) -> dict[str, str]:
    """The shared settings with the StandardAuthorizer on: for the ACL scenarios, on a pair of brokers of their own.

    Every connection of the differential suite is plaintext, so User:ANONYMOUS, and in Kafka the broker talks to
    its own controller as ANONYMOUS too: with ``allow.everyone.if.no.acl.found`` true (the default here) a
    resource without ACLs stays open to both, and a scenario denies ANONYMOUS a topic, group or transactional id
    by granting the resource to someone else (an ACL then applies, so only who it names may). Scenarios leave the
    cluster resource alone, as an ACL on it would fence Kafka's own broker.
    """
    return {
        **SHARED_GROUP_SETTINGS,
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "super.users": super_users,
        "allow.everyone.if.no.acl.found": "true" if allow_everyone_if_no_acl_found else "false",
    }


ACL_SETTINGS = authorizer_settings()
