"""The differential suite: the same raw-protocol scenarios against group-broker and Apache Kafka, compared field by
field after normalising what legitimately differs. Also a tool: ``python -m tests.differential --help``."""
