"""Puts mtc's binaries in the wheel (pyproject.toml holds the metadata).

A regular (non-editable) build copies the `mtc` binary and
libmtc_runtime.so from the CMake build folder, $MTC_BUILD_DIR or the
checkout's `build`, into the package as mtc/bin/mtc and
mtc/lib/libmtc_runtime.so, where mtc._tools looks first. An editable
install copies nothing: the package then finds the checkout's build."""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
FILES = (("bin", "mtc"), ("lib", "libmtc_runtime.so"))


class BuildPyWithBinaries(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        build = Path(os.environ.get("MTC_BUILD_DIR", HERE.parent / "build"))
        missing = [str(build / d / f) for d, f in FILES
                   if not (build / d / f).is_file()]
        if missing:
            raise SystemExit(
                "mtc: cannot put mtc's binaries in the package: no "
                + ", ".join(missing) + ". Build mtc first (README.md, Quick "
                "start) or set MTC_BUILD_DIR to a CMake build folder.")
        for d, f in FILES:
            dest = Path(self.build_lib) / "mtc" / d
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(build / d / f, dest / f)


class BinaryDistribution(Distribution):
    """The wheel holds an executable and a shared library: tag it for this
    platform, not py3-none-any."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithBinaries},
      distclass=BinaryDistribution)
