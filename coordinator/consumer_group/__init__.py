"""Building blocks of KIP-848 consumer groups (the "consumer" rebalance protocol), beside the classic coordinator.

In the consumer protocol the coordinator, not a group leader, computes each member's target assignment and moves
every member towards it by heartbeats. This package holds the pieces of that model as sans-IO functions and state:
the server-side assignors (`assignors`: Kafka's `uniform` and `range`) and the member reconciliation
(`reconciliation`, `member_state`: Kafka's CurrentAssignmentBuilder) and the resolution of regular-expression
subscriptions in RE2 syntax (`subscriptions_regex`). Nothing here is wired to the broker yet
(issue #14).
"""
