"""Reading the written Parquet tables back on the driver, without Spark, for the report and the pictures.

Only bounded tables are read here: the ``picture_*`` and ``report_*`` summaries Spark aggregated, and the
``describe`` table the report prints. The per-tick and per-partition histories stay on disk for whoever queries
them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

__all__ = ["read_table"]


def read_table(out_dir: Path, name: str, columns: list[str] | None = None) -> pd.DataFrame:
    path = out_dir / "tables" / name
    if not path.exists():
        return pd.DataFrame(columns=columns or [])
    table = pq.read_table(str(path), columns=columns)
    return table.to_pandas()
