"""The timelines: per group, `model` (the bounded logs), `live` (what a group does now); per transactional id,
`transactions`; rendered by `text`, `html` and `txn_html`; `bounded` is the bounded per-key log both keep."""
