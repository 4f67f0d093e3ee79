"""The package as an editor and help() see it: every public name documented, and the type stubs
(python/xgpu/*.pyi) agreeing with the module (mypy's stubtest, where mypy is installed)."""

import inspect
import os
import pathlib
import pydoc
import subprocess
import sys

import pytest

import xgpu

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = [xgpu, xgpu.amg, xgpu.random, xgpu.solvers, xgpu.sparse]


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name)
        if inspect.ismodule(obj) or not (callable(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", "").split(".")[0] not in ("xgpu", "_xgpu"):
            continue  # numpy's and the standard library's names used by a module
        yield f"{module.__name__}.{name}", obj


def _documented(obj):
    doc = inspect.getdoc(obj) or ""
    # nanobind puts the signature on the first line of a function's __doc__: a docstring is more.
    sig = getattr(obj, "__nb_signature__", None)
    if sig:
        doc = doc.split("\n", 1)[1] if "\n" in doc else ""
    return bool(doc.strip())


def _members(cls):
    for name, member in vars(cls).items():
        if name.startswith("_") and name != "__call__" and name != "__init__":
            continue
        if name in ("__init__",) and member is object.__init__:
            continue
        if isinstance(member, (property, staticmethod, classmethod)) or inspect.isfunction(member) or (
                callable(member) and hasattr(member, "__nb_signature__")) or type(member).__name__ == "nb_func":
            if name in ("__init__", "__call__") and not _documented(member):
                continue  # documented on the class
            yield name, member


def test_every_public_function_and_class_has_a_docstring():
    missing = []
    for qualname, obj in (p for m in MODULES for p in _public(m)):
        if not _documented(obj):
            missing.append(qualname)
        if inspect.isclass(obj):
            for name, member in _members(obj):
                target = getattr(member, "__func__", member)
                if not _documented(target):
                    missing.append(f"{qualname}.{name}")
    assert not missing, "no docstring: " + ", ".join(sorted(set(missing)))


def test_help_shows_signature_and_docstring():
    text = pydoc.render_doc(xgpu.to_device, renderer=pydoc.plaintext)
    assert "to_device(context, ary, dtype=None)" in text and "device" in text.lower()
    text = pydoc.render_doc(xgpu.Context, renderer=pydoc.plaintext)
    assert "compile(self, source: str, options: collections.abc.Sequence[str] = []) -> xgpu._xgpu.Program" in text
    assert "Compiles source in xgpu's kernel dialect" in text
    text = pydoc.render_doc(xgpu.show_config, renderer=pydoc.plaintext)
    assert "show_config(file: 'TextIO | None' = None) -> 'None'" in text and "NVRTC" in text


def test_stubs_and_marker_are_installed():
    folder = pathlib.Path(xgpu.__file__).parent
    assert (folder / "py.typed").is_file()
    for module in ("__init__", "_xgpu", "_array", "_algorithms", "_kernels", "_errors", "amg", "image", "random", "solvers", "sparse"):
        assert (folder / f"{module}.pyi").is_file(), module


def test_stubs_match_the_module():
    pytest.importorskip("mypy", reason="mypy is not installed (pip install xgpu[typing])")
    result = subprocess.run([sys.executable, "-m", "mypy.stubtest", "xgpu", "--allowlist",
                             str(ROOT / "tests" / "python" / "stubtest-allowlist.txt")],
                            capture_output=True, text=True, timeout=600, cwd=os.path.dirname(ROOT))
    assert result.returncode == 0, result.stdout + result.stderr


def test_extension_stub_names_match_the_extension():
    """_xgpu.pyi (nanobind's stubgen, with the package's additions) names what the extension has."""
    import ast
    from xgpu import _xgpu

    tree = ast.parse((pathlib.Path(xgpu.__file__).parent / "_xgpu.pyi").read_text())

    def names(body):
        out = set()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, ast.Assign):
                out.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                out.add(node.target.id)
        return {n for n in out if not n.startswith("_")}

    assert names(tree.body) == {n for n in dir(_xgpu) if not n.startswith("_")}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            runtime = {n for n in vars(getattr(_xgpu, node.name)) if not n.startswith("_")}
            assert names(node.body) == runtime, node.name
