# Types of xgpu's exceptions (_errors.py).
from typing import Sequence

import numpy as np

class Error(Exception):
    backend: str
    call: str
    code: int
    code_name: str

class CompileError(Error):
    log: str
    options: Sequence[str]
    source: str

class OutOfMemory(Error, MemoryError): ...
class LaunchError(Error): ...
class InvalidArgument(Error, ValueError): ...
class ShapeError(InvalidArgument): ...

class AxisError(ShapeError, np.exceptions.AxisError):
    def __init__(self, message: str) -> None: ...

class ArrayHasOffsetError(InvalidArgument):
    def __init__(self, message: str = ...) -> None: ...

class DTypeError(Error, TypeError): ...
class BackendUnavailable(Error): ...
class BackendError(Error): ...

TYPES: dict[str, type[Error]]
