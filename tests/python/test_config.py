"""Where the backends' libraries come from: NVRTC and PoCL from their wheels (found on sys.path, as
pip install xgpu[cuda] and xgpu[pocl] put them), the fallback ICD only where no system ICD is
registered, and what show_config() and `python -m xgpu` report. Each case runs in a fresh
interpreter, since a process decides its ICDs and NVRTC once."""

import os
import pathlib
import subprocess
import sys

import pytest

import xgpu


def _system_pocl():
    """The system's PoCL library, as its .icd file names it (None where there is none)."""
    for icd in sorted(pathlib.Path("/etc/OpenCL/vendors").glob("*.icd")):
        name = icd.read_text().strip()
        if "pocl" in name:
            for folder in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"):
                path = pathlib.Path(folder) / name
                if path.exists():
                    return path
    return None


def _system_nvrtc():
    for folder in ("/usr/local/cuda/lib64", "/usr/local/cuda/lib"):
        path = pathlib.Path(folder) / "libnvrtc.so.13"
        if path.exists():
            return path
    return None


def _run(code, env_changes, tmp_path, extra_path=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("XGPU_BACKEND", "XGPU_DEVICE", "XGPU_OPENCL_ICD", "XGPU_OPENCL_FALLBACK_ICD",
                        "XGPU_CUDA_NVRTC", "XGPU_CUDA_NVRTC_PATH", "OCL_ICD_FILENAMES", "OCL_ICD_VENDORS")}
    env.update(env_changes)
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)


def _fake_site(tmp_path, pocl=None, nvrtc=None):
    """A site folder laid out as the pocl-binary-distribution and nvidia-cuda-nvrtc wheels lay
    theirs, with links to the system's libraries."""
    site = tmp_path / "site"
    if pocl:
        # The folder, not the file, is linked: PoCL finds its device drivers beside itself.
        (site / "pocl_binary_distribution").mkdir(parents=True)
        (site / "pyopencl").mkdir(parents=True)
        (site / "pyopencl" / ".libs").symlink_to(pocl.parent)
    if nvrtc:
        (site / "nvidia" / "cu13" / "lib").mkdir(parents=True)
        (site / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13").symlink_to(nvrtc)
    return site


REPORT = "import xgpu\nfor b in xgpu.backends():\n    print(b.name, b.available, b.reason)\n    print(*b.libraries, sep='\\n')"


@pytest.mark.skipif(_system_pocl() is None, reason="no system PoCL to stand in for PoCL's wheel")
def test_pocl_wheel_is_the_platform_where_no_icd_is_registered(tmp_path):
    site = _fake_site(tmp_path, pocl=_system_pocl())
    (tmp_path / "empty").mkdir()
    r = _run(REPORT, {"OCL_ICD_VENDORS": str(tmp_path / "empty")}, tmp_path, site)
    assert r.returncode == 0, r.stderr
    assert "opencl True" in r.stdout
    assert f"ICD: {site}/pyopencl/.libs/libpocl" in r.stdout
    assert f"(XGPU_OPENCL_FALLBACK_ICD; no ICD registered in {tmp_path / 'empty'})" in r.stdout


@pytest.mark.skipif(_system_pocl() is None, reason="no system PoCL")
def test_a_registered_icd_wins_over_the_wheel_unless_asked(tmp_path):
    site = _fake_site(tmp_path, pocl=_system_pocl())
    r = _run(REPORT, {}, tmp_path, site)
    assert r.returncode == 0, r.stderr
    assert "ICD: /etc/OpenCL/vendors/" in r.stdout and "XGPU_OPENCL_FALLBACK_ICD" not in r.stdout
    r = _run(REPORT, {"XGPU_OPENCL_ICD": "fallback"}, tmp_path, site)
    assert r.returncode == 0, r.stderr
    assert "opencl True" in r.stdout and "(XGPU_OPENCL_FALLBACK_ICD; XGPU_OPENCL_ICD=fallback)" in r.stdout


def test_no_platform_names_the_pip_extra(tmp_path):
    (tmp_path / "empty").mkdir()
    code = "import xgpu\ntry:\n    xgpu.Context.create('opencl')\nexcept xgpu.BackendUnavailable as e:\n    print(e)"
    r = _run(code, {"OCL_ICD_VENDORS": str(tmp_path / "empty"), "XGPU_OPENCL_ICD": "system"}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "no OpenCL platform" in r.stdout and "pip install xgpu[pocl]" in r.stdout


def test_bad_icd_choice_is_an_error_naming_it(tmp_path):
    # Read when the OpenCL backend starts: the backend is then unavailable, for that reason.
    code = "import xgpu\ntry:\n    xgpu.Context.create('opencl')\nexcept xgpu.BackendUnavailable as e:\n    print(e)"
    r = _run(code, {"XGPU_OPENCL_ICD": "pocl"}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "XGPU_OPENCL_ICD='pocl' is not one of auto, system, fallback" in r.stdout
    # No fallback named, even where the package found PoCL's wheel: the backend reads the variable
    # when it starts, after the import.
    unset = "import os, xgpu\nos.environ.pop('XGPU_OPENCL_FALLBACK_ICD', None)\n"
    r = _run(unset + code, {"XGPU_OPENCL_ICD": "fallback"}, tmp_path)
    assert "no fallback ICD is named" in r.stdout and "pip install xgpu[pocl]" in r.stdout


@pytest.mark.skipif("cuda" not in xgpu.backend_names() or _system_nvrtc() is None,
                    reason="no CUDA backend, or no NVRTC to stand in for NVIDIA's wheel")
def test_nvrtc_wheel_is_found_before_the_system(tmp_path):
    site = _fake_site(tmp_path, nvrtc=_system_nvrtc())
    r = _run(REPORT, {}, tmp_path, site)
    assert r.returncode == 0, r.stderr
    assert f": {site}/nvidia/cu13/lib/libnvrtc.so.13" in r.stdout, r.stdout
    # A folder the user lists comes before the wheel's.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "libnvrtc.so.13").symlink_to(_system_nvrtc())
    r = _run(REPORT, {"XGPU_CUDA_NVRTC_PATH": str(mine)}, tmp_path, site)
    assert f": {mine}/libnvrtc.so.13" in r.stdout, r.stdout


@pytest.mark.skipif("cuda" not in xgpu.backend_names(), reason="no CUDA backend")
def test_missing_nvrtc_names_the_pip_extra(tmp_path):
    r = _run(REPORT, {"XGPU_CUDA_NVRTC": str(tmp_path / "libnvrtc.so.13")}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "NVRTC: xgpu[cuda]: NVRTC (libnvrtc.so.13) not found" in r.stdout and "pip install xgpu[cuda]" in r.stdout


def test_show_config_reports_backends_libraries_and_wheels():
    import io
    out = io.StringIO()
    xgpu.show_config(out)
    text = out.getvalue()
    assert text.startswith(f"xgpu {xgpu.__version__} (")
    for b in xgpu.backends():
        assert f"  {b.name}: " in text
        for line in b.libraries:
            assert line in text
    assert "wheels:" in text and "Context.from_env(): " in text


def test_python_m_xgpu_prints_the_configuration(tmp_path):
    r = subprocess.run([sys.executable, "-m", "xgpu"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    available = any(b.available for b in xgpu.backends())
    assert r.returncode == (0 if available else 1), r.stderr
    assert "backends:" in r.stdout and ("ICD loader: " in r.stdout or "opencl" not in xgpu.backend_names())


def test_finding_no_wheels_changes_nothing(tmp_path, monkeypatch):
    from xgpu import _wheels
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.delenv("XGPU_CUDA_NVRTC_PATH", raising=False)
    monkeypatch.delenv("XGPU_OPENCL_FALLBACK_ICD", raising=False)
    _wheels.configure()
    assert "XGPU_CUDA_NVRTC_PATH" not in os.environ and "XGPU_OPENCL_FALLBACK_ICD" not in os.environ
