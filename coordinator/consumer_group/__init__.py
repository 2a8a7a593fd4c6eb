"""KIP-848 consumer groups (the `consumer` rebalance protocol): sans-IO building blocks, not yet wired in."""
