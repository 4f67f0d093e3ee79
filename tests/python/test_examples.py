"""The Python examples (examples/python) and the Python blocks of docs/python.md run, on each
selected backend."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "python").glob("*.py"))
DOC_BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "python.md").read_text(), re.S)


def _run(ctx, args):
    env = dict(os.environ, XGPU_BACKEND=ctx.backend, XGPU_DEVICE=str(ctx.device.index))
    result = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example(ctx, example):
    _run(ctx, [str(example)])


@pytest.mark.parametrize("block", range(len(DOC_BLOCKS)))
def test_doc_block(ctx, block):
    _run(ctx, ["-c", DOC_BLOCKS[block]])
