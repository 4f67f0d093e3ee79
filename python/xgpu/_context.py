"""The process's default context: where a host matrix or array goes to the device when the call
names no context (as CuPy's current device)."""

import threading

from . import _xgpu

_lock = threading.Lock()
_default = None


def default_context():
    """``Context.from_env()``, made once per process on first use (XGPU_BACKEND and XGPU_DEVICE
    choose it) and returned by every later call."""
    global _default
    with _lock:
        if _default is None:
            _default = _xgpu.Context.from_env()
        return _default
