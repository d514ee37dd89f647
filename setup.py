"""Builds the extension mhalearn._core with the project's CMake build (the
release preset's flags, so the installed module computes the same bytes as the
CLI) and lets setuptools install it beside python/mhalearn/*.py.

MHALEARN_BUILD_DIR names a build tree to configure or reuse (default
build/pip); scripts/test-python.sh points it at build/release so that the
tested install does not compile the library a second time."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(mhalearn VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(os.environ.get("MHALEARN_BUILD_DIR", ROOT / "build" / "pip")).resolve()
        if not (build / "CMakeCache.txt").exists():
            subprocess.run(["cmake", "--preset", "release", "-B", str(build), "-DBUILD_TESTING=OFF",
                            "-DMHALEARN_BENCH=OFF", "-DMHALEARN_PYTHON=ON"], cwd=ROOT, check=True)
        jobs = os.environ.get("JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build), "--target", "mhalearn_python", "-j", jobs], cwd=ROOT,
                       check=True)
        suffix = ".cpython-%d%d" % sys.version_info[:2]
        built = [p for p in (build / "python" / "mhalearn").glob("_core*.so") if suffix in p.name]
        if len(built) != 1:
            raise RuntimeError(f"expected one _core{suffix}*.so in {build}/python/mhalearn, found {built}: "
                               f"configure that build with this interpreter ({sys.executable})")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


setup(version=project_version(), ext_modules=[Extension("mhalearn._core", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
