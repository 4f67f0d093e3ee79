"""xgpu's errors as Python exceptions.

Every error is an ``xgpu.Error`` and carries the backend it came from, the native call that failed
and its code (``backend``, ``call``, ``code``, ``code_name``; empty for errors of the neutral
layer). Misuse is refused before any work is enqueued: shapes that do not fit raise
``ShapeError`` (a ``ValueError``; an axis out of range ``AxisError``, numpy's too), other bad arguments ``InvalidArgument`` (a ``ValueError``),
element types that do not fit ``DTypeError`` (a ``TypeError``). A kernel that does not compile
raises ``CompileError`` with the compiler's ``log``, the ``options`` and the ``source``.
"""

import numpy as _np


class Error(Exception):
    """Any error of xgpu."""

    backend = ""
    call = ""
    code = 0
    code_name = ""


class CompileError(Error):
    """The kernel source did not compile; ``log``, ``options`` and ``source`` say how."""

    log = ""
    options = ()
    source = ""

    def __str__(self):
        text = super().__str__()
        return text if not self.log or self.log in text else f"{text}\n{self.log}"


class OutOfMemory(Error, MemoryError):
    """Device or pinned host memory could not be allocated."""


class LaunchError(Error):
    """A kernel launch, or a kernel that ran, failed."""


class InvalidArgument(Error, ValueError):
    """The caller passed something wrong; nothing was enqueued."""


class ShapeError(InvalidArgument):
    """Array shapes that do not fit together."""


class AxisError(ShapeError, getattr(_np, "exceptions", _np).AxisError):
    """An axis out of range (numpy's AxisError, an IndexError and a ValueError, is its base too)."""

    def __init__(self, message):
        ShapeError.__init__(self, message)

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class ArrayHasOffsetError(InvalidArgument):
    """PyOpenCL's: an array that starts inside its buffer where one pointer must describe it (an
    OpenCL buffer argument has no offset)."""

    def __init__(self, message="The operation you are attempting does not yet support arrays that start at an "
                               "offset from the beginning of their buffer."):
        InvalidArgument.__init__(self, message)


class DTypeError(Error, TypeError):
    """Element types that do not fit together (an array of the wrong type, a value that cannot be stored)."""


class BackendUnavailable(Error):
    """The requested backend or device cannot start here; the message says what is missing."""


class BackendError(Error):
    """Any other failure a backend reported."""


TYPES = {
    cls.__name__: cls
    for cls in (Error, CompileError, OutOfMemory, LaunchError, InvalidArgument, ShapeError, AxisError, DTypeError,
                BackendUnavailable, BackendError)
}
