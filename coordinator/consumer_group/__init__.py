"""KIP-848 consumer groups (the "consumer" rebalance protocol), beside the classic coordinator.

In the consumer protocol the coordinator, not a group leader, computes each member's target assignment and moves
every member towards it by heartbeats. The rules, with the tests that show each, are in docs/consumer-groups.md.

* the model: `group` (epochs, members, target, who holds which partition), `member`, `member_state`;
* the heartbeat path: `heartbeat` (ConsumerGroupHeartbeat: validation, epochs, targets, reconciliation, leave,
  timers), `target` (the target assignment and the assignor choice), `reconciliation` (Kafka's
  CurrentAssignmentBuilder), `assignors` (Kafka's `uniform` and `range`), `subscriptions_regex` (RE2/J regexes);
* the other APIs: `describe` (ConsumerGroupDescribe), `offset_checks` (OffsetCommit/OffsetFetch/OffsetDelete);
* persistence: `records` (record types 3-8) and `loader` (their replay);
* online migration: `migration`, `classic_conversion`, `classic_members`;
* operators and tests: `controls`, `views`; `topics` is the broker's topic metadata as the coordinator reads it.
"""
