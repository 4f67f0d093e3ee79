from typing import SupportsIndex

from ._array import Array

__all__ = ["sort", "argsort", "sort_by_key"]

def sort(a: Array, axis: SupportsIndex | None = -1, kind: str | None = None, order: None = None, *,
         stable: bool | None = None) -> Array: ...
def argsort(a: Array, axis: SupportsIndex | None = -1, kind: str | None = None, order: None = None, *,
            stable: bool | None = None) -> Array: ...
def sort_by_key(keys: Array, values: Array) -> None: ...
