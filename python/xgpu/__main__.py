"""``python -m xgpu``: prints xgpu.show_config() (the version, the backends and devices found, the
libraries behind them, and why a backend is unavailable)."""

import sys

from ._config import main

if __name__ == "__main__":
    sys.exit(main())
