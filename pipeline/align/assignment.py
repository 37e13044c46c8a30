"""scipy's linear_sum_assignment (the Hungarian assignment) without importing scipy.optimize: its
package imports every solver (linprog, minimize, linalg, special, fft: 0.07-0.15 s of CPU at every
cold `compare`) for this one function, which is a small C extension of its own (scipy.optimize._lsap). It
is loaded from its file alone; when that cannot be done (another scipy's layout), from scipy.optimize.
Either way the same function: the extension's module is initialised once per process."""
from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path

NAME = "scipy.optimize._lsap"


def _load():
    try:
        import scipy
        folder = Path(scipy.__file__).parent / "optimize"
        path = next(p for suffix in EXTENSION_SUFFIXES if (p := folder / f"_lsap{suffix}").is_file())
        loader = ExtensionFileLoader(NAME, str(path))
        module = module_from_spec(spec_from_loader(NAME, loader))
        loader.exec_module(module)
        return module.linear_sum_assignment
    except Exception:  # any failure: the ordinary import (which says what is wrong, if anything)
        from scipy.optimize import linear_sum_assignment
        return linear_sum_assignment


linear_sum_assignment = _load()
