"""The alignment's lighter imports give scipy's own results: the assignment loaded without
scipy.optimize is scipy's function, and exact's count bound is scipy's cityblock distance."""
import subprocess
import sys

import numpy as np
from scipy.optimize import linear_sum_assignment as scipys
from scipy.spatial.distance import cdist

from pipeline.align.assignment import linear_sum_assignment
from pipeline.align.exact import _cityblock
from conftest import ROOT


def test_the_assignment_is_scipys():
    weights = np.random.default_rng(7).random((40, 55))
    weights[3] = weights[4]  # ties, decided as scipy decides them
    for got, want in zip(linear_sum_assignment(weights, maximize=True), scipys(weights, maximize=True)):
        assert np.array_equal(got, want)


def test_the_alignment_imports_no_scipy_solver():
    code = "import sys, pipeline.align.match\nprint(sorted(m for m in sys.modules if m.startswith(('scipy.optimize', " \
           "'scipy.spatial', 'scipy.sparse.csgraph', 'scipy.linalg'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "['scipy.optimize._lsap']"


def test_the_count_bound_is_the_cityblock_distance():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 400, (30, 32)).astype(np.int32), rng.integers(0, 400, (70, 32)).astype(np.int32)
    got = _cityblock(a, b)
    assert got.dtype == np.float64 and np.array_equal(got, cdist(a.astype(float), b.astype(float), "cityblock"))
