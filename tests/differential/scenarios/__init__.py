"""The scenarios, one module per area; `tests.differential.registry.load_all` imports them all."""
