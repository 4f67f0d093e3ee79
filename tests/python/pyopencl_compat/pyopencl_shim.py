"""A PyOpenCL look-alike over xgpu, just wide enough for PyOpenCL's test/test_array.py.

``install()`` puts modules named ``pyopencl``, ``pyopencl.array``, ``pyopencl.clmath``,
``pyopencl.clrandom``, ``pyopencl.tools``, ``pyopencl.characterize`` and ``pyopencl.cltypes``
into ``sys.modules``. They only adapt PyOpenCL's calling conventions to xgpu's; every computation
is xgpu's own:

- ``cl.Context`` holds one xgpu context (``xgpu.Context.from_env()``, made once for the whole run), and
  ``cl.CommandQueue(ctx)`` that context's default queue (xgpu's queues are in order; array
  operations run on the context's current queue);
- ``cl_array.f(queue, ...)`` is ``xgpu.f(queue's context, ...)`` for the creation functions,
  ``cl_array.Array(queue, shape, dtype)`` is ``xgpu.empty``, and ``isinstance(x, cl_array.Array)``
  tests for an ``xgpu.Array``;
- ``maximum``/``minimum``/``if_positive`` drop PyOpenCL's ``queue=`` argument (``if_positive`` is
  ``xgpu.where(criterion > 0, ...)``); any other name of ``pyopencl.array`` or ``pyopencl.clmath``
  is xgpu's own function of that name (``sum``, ``dot``, ``cumsum``, ``logical_not``, ...), so
  a name xgpu lacks raises AttributeError;
- ``clrandom.rand``/``PhiloxGenerator`` are ``xgpu.random.Philox``;
- one method is added to ``xgpu.Array``: ``with_queue(queue)`` (a new handle on the same
  elements: xgpu arrays belong to a context, not to a queue).

Nothing OpenCL-specific (buffers, events, allocators, struct or vector types) is emulated: the
tests that need it are skipped by conftest.py.
"""

import sys
import types

import xgpu

_contexts = {}


def _xgpu_context():
    """The run's xgpu context (contexts are costly to make: one for the whole run, as in tests/python)."""
    if "ctx" not in _contexts:
        _contexts["ctx"] = xgpu.Context.from_env()
    return _contexts["ctx"]


def _x(queue):
    """The xgpu context of a PyOpenCL queue or context."""
    return queue.context._x if isinstance(queue, CommandQueue) else queue._x


# -- pyopencl ------------------------------------------------------------------------------------
class device_type:  # noqa: N801 (PyOpenCL's name); OpenCL's CL_DEVICE_TYPE_* bits
    DEFAULT, CPU, GPU, ACCELERATOR, CUSTOM = 1, 2, 4, 8, 16
    ALL = 0xFFFFFFFF


class command_queue_properties:  # noqa: N801
    OUT_OF_ORDER_EXEC_MODE_ENABLE, PROFILING_ENABLE = 1, 2


class Platform:
    def __init__(self, xdev):
        self.name = xdev.platform
        self.vendor = xdev.vendor  # xgpu reports the device's vendor only


class Device:
    """PyOpenCL's Device over xgpu's: the fields test_array.py reads."""

    def __init__(self, xdev):
        self._x = xdev
        self.name = xdev.name
        self.platform = Platform(xdev)
        self.type = getattr(device_type, xdev.type.upper(), device_type.DEFAULT)
        self.has_fp64 = xdev.has_fp64
        self.address_bits = 64  # xgpu's element offsets and sizes are 64-bit
        self.max_mem_alloc_size = xdev.max_allocation or xdev.global_memory

    def __str__(self):
        return f"<xgpu device '{self.name}' on '{self.platform.name}'>"


class Context:
    def __init__(self, xctx):
        self._x = xctx
        self.devices = [Device(xctx.device)]


class CommandQueue:
    """The context's default queue. An out-of-order queue is accepted and runs in order (an
    in-order queue keeps every ordering an out-of-order one may choose)."""

    def __init__(self, context, device=None, properties=None):
        self.context = context
        self.device = context.devices[0]

    def finish(self):
        self.context._x.queue.finish()


class CtxFactory:
    """PyOpenCL's ctx_factory: a new Context each call (over the run's xgpu context)."""

    def __init__(self, device=None):
        self.device = device or Device(_xgpu_context().device)

    def __call__(self):
        return Context(_xgpu_context())

    def __str__(self):
        return f"<context factory for <xgpu.Device '{self.device.name}' on '{self.device.platform.name}'>>"


def get_cl_header_version():
    """The OpenCL version the device reports ("OpenCL 3.0 ...")."""
    major, minor = _xgpu_context().device.version.split()[1].split(".")[:2]
    return int(major), int(minor)


# -- pyopencl.array ------------------------------------------------------------------------------
class _ArrayType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, xgpu.Array)


class Array(metaclass=_ArrayType):
    """``cl_array.Array(queue, shape, dtype, order)`` makes an uninitialised xgpu array."""

    def __new__(cls, cq, shape, dtype, order="C"):
        return xgpu.empty(_x(cq), shape, dtype, order)


def to_device(queue, ary):
    return xgpu.to_device(_x(queue), ary)


def empty(queue, shape, dtype, order="C"):
    return xgpu.empty(_x(queue), shape, dtype, order)


def zeros(queue, shape, dtype, order="C"):
    return xgpu.zeros(_x(queue), shape, dtype, order)


def arange(queue, *args, **kwargs):
    return xgpu.arange(_x(queue), *args, **kwargs)


def maximum(a, b, out=None, queue=None):
    assert out is None
    return xgpu.maximum(a, b)


def minimum(a, b, out=None, queue=None):
    assert out is None
    return xgpu.minimum(a, b)


def cumsum(a, output_dtype=None, queue=None):
    return xgpu.cumsum(a, dtype=output_dtype)


def if_positive(criterion, then_, else_, out=None, queue=None):
    assert out is None
    return xgpu.where(criterion > 0, then_, else_)


def _with_queue(self, queue):
    return self.view()


# -- pyopencl.clrandom ---------------------------------------------------------------------------
class PhiloxGenerator:
    """PyOpenCL's generator interface over xgpu.random.Philox (uniform integers for integer
    arrays, as PyOpenCL's)."""

    def __init__(self, context, key=None, counter=None, seed=None):
        self._gen = xgpu.random.Philox(context._x, seed=seed)

    def fill_uniform(self, ary, a=0, b=1, queue=None):
        if ary.dtype.kind in "iu":
            self._gen.fill_integers(ary, a, b)
        else:
            self._gen.fill_uniform(ary, a, b)

    def uniform(self, queue, shape, dtype, a=0, b=1):
        result = empty(queue, shape, dtype)
        self.fill_uniform(result, a, b)
        return result

    def fill_normal(self, ary, mu=0, sigma=1, queue=None):
        self._gen.fill_normal(ary, mu, sigma)

    def normal(self, queue, shape, dtype, mu=0, sigma=1):
        result = empty(queue, shape, dtype)
        self.fill_normal(result, mu, sigma)
        return result


class ThreefryGenerator:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("xgpu.random has no Threefry generator")


_generators = {}


def rand(queue, shape, dtype, luxury=None, a=0, b=1):
    """Uniform values in [a, b) from one Philox generator a context (PyOpenCL's _get_generator)."""
    assert luxury is None
    gen = _generators.setdefault(id(_x(queue)), PhiloxGenerator(queue.context))
    result = Array(queue, shape, dtype)
    gen.fill_uniform(result, a=a, b=b)
    return result


# -- pyopencl.characterize, pyopencl.tools ----------------------------------------------------------
def has_double_support(dev):
    return dev.has_fp64


def has_struct_arg_count_bug(dev, ctx=None):
    return False  # xgpu passes no struct arguments


def pytest_generate_tests_for_pyopencl(metafunc):
    """ctx_factory (and device, platform) for the xgpu device XGPU_BACKEND/XGPU_DEVICE select."""
    names = [n for n in ("platform", "device", "ctx_factory") if n in metafunc.fixturenames]
    if names:
        factory = CtxFactory()
        values = {"platform": factory.device.platform, "device": factory.device, "ctx_factory": factory}
        metafunc.parametrize(names, [tuple(values[n] for n in names)], ids=[str(factory)])


# -- installation ----------------------------------------------------------------------------------
def _module(name, attrs, fallback=None):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    if fallback is not None:
        m.__getattr__ = lambda attr: getattr(fallback, attr)
    sys.modules[name] = m
    return m


def install():
    """Installs the modules (once); refuses to shadow a real PyOpenCL already imported."""
    if "pyopencl" in sys.modules:
        if getattr(sys.modules["pyopencl"], "_XGPU_SHIM", False):
            return
        raise RuntimeError("a real pyopencl is already imported; the xgpu shim would shadow it")
    assert not hasattr(xgpu.Array, "with_queue")
    xgpu.Array.with_queue = _with_queue
    cl = _module("pyopencl", dict(
        _XGPU_SHIM=True, _PYPY=False, Context=Context, Device=Device, Platform=Platform, CommandQueue=CommandQueue,
        CtxFactory=CtxFactory, device_type=device_type, command_queue_properties=command_queue_properties,
        get_cl_header_version=get_cl_header_version))
    cl.array = _module("pyopencl.array", dict(
        Array=Array, to_device=to_device, empty=empty, zeros=zeros, arange=arange, maximum=maximum,
        minimum=minimum, if_positive=if_positive, cumsum=cumsum), fallback=xgpu)
    cl.clmath = _module("pyopencl.clmath", {}, fallback=xgpu)
    cl.clrandom = _module("pyopencl.clrandom", dict(
        PhiloxGenerator=PhiloxGenerator, ThreefryGenerator=ThreefryGenerator, rand=rand))
    cl.characterize = _module("pyopencl.characterize", dict(
        has_double_support=has_double_support, has_struct_arg_count_bug=has_struct_arg_count_bug))
    cl.tools = _module("pyopencl.tools", dict(pytest_generate_tests_for_pyopencl=pytest_generate_tests_for_pyopencl))
    cl.cltypes = _module("pyopencl.cltypes", {})  # vector types: the test that uses them is skipped
