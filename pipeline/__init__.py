"""Analytics over the broker's log directory on PySpark: lag, Burrow-style status, rebalance history.

The broker itself never imports this package: it needs the optional ``pipeline`` extra (pyspark, pyarrow, pandas,
matplotlib) and Java 17. Modules that do not touch Spark (``layout``, ``decode``, ``rules``, ``synth``) import
without it, so the rule tests and the synthetic-log writer run anywhere.
"""
