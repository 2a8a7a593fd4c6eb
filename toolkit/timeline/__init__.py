"""The rebalance timeline: `model` (the bounded logs), `live` (what a group does now), `text` and `html`."""
