"""Where the build tree is: the CLI binary and the fault-switch copy of the
module live there (test_same_rows.py, test_faults.py). MHALEARN_BUILD_DIR when
set (scripts/test-python.sh sets it: the suite runs against a pip-installed
copy of the module); otherwise the module is the build tree's own
(PYTHONPATH=build/<preset>/python) and the tree is two folders up."""
import os
import pathlib

import mhalearn


def build_dir():
    if os.environ.get("MHALEARN_BUILD_DIR"):
        return pathlib.Path(os.environ["MHALEARN_BUILD_DIR"]).resolve()
    return pathlib.Path(mhalearn.__file__).resolve().parents[2]
