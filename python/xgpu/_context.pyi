# Types of the default context (_context.py).
from . import _xgpu

def default_context() -> _xgpu.Context: ...
