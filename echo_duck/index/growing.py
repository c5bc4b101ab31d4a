"""Numpy columns that grow by appends, for the in-process copies of tables (keyword_search.py,
eligibility.py)."""

from __future__ import annotations

import numpy as np


class GrowingColumns:
    """Columns that grow by appends into spare capacity (doubling), so a write copies only its rows."""

    def __init__(self, **dtypes) -> None:
        self._columns = {name: np.zeros(1024, dtype) for name, dtype in dtypes.items()}
        self.size = 0

    def append(self, **values: np.ndarray) -> None:
        n = len(next(iter(values.values())))
        if self.size + n > len(next(iter(self._columns.values()))):
            capacity = max(2 * (self.size + n), 1024)
            for name, column in self._columns.items():
                grown = np.zeros(capacity, column.dtype)
                grown[: self.size] = column[: self.size]
                self._columns[name] = grown
        for name, value in values.items():
            self._columns[name][self.size : self.size + n] = value
        self.size += n

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self.__dict__["_columns"][name][: self.__dict__["size"]]
        except KeyError:
            raise AttributeError(name) from None
