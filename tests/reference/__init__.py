"""Apache Kafka itself, run from the pinned Maven project in ``server/``, as the reference the tests compare with."""
