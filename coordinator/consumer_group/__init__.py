"""Building blocks of KIP-848 consumer groups (the "consumer" rebalance protocol), beside the classic coordinator.

In the consumer protocol the coordinator, not a group leader, computes each member's target assignment. This
package will hold the pieces of that model as sans-IO functions and state: for now the server-side assignors
(`assignors`: Kafka's `uniform` and `range`). Nothing here is wired to the broker yet (issue #14).
"""
