# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A PEP 517 build backend for the optrace extension module (python/*.c).

It compiles the module with the compiler and flags of the Python that runs
it (sysconfig), against liboptrace found with pkg-config (an installed
optrace: `make install`, or the liboptrace-dev package), else against the
one built in this repository (`make lib`: ../.output/lib), and links it
with that library's folder as its run path, so that the module maps the
liboptrace it was built against (optrace.LIBOPTRACE says which). No package
index is needed: the wheel is written here with the standard library.

OPTRACE_PKG_CONFIG=0 skips pkg-config; OPTRACE_LIBDIR and OPTRACE_INCLUDEDIR
name a liboptrace elsewhere.
"""

import base64
import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

NAME = "optrace"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(HERE)


def _pkg_config():
    if os.environ.get("OPTRACE_PKG_CONFIG") == "0":
        return None
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "optrace"],
                                check=True, capture_output=True, text=True).stdout.strip()
        includedir = subprocess.run(["pkg-config", "--variable=includedir", "optrace"],
                                    check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return libdir, includedir


def _liboptrace():
    """(libdir, includedir, where it came from) of the liboptrace to link."""
    if os.environ.get("OPTRACE_LIBDIR"):
        return (os.environ["OPTRACE_LIBDIR"],
                os.environ.get("OPTRACE_INCLUDEDIR", os.path.join(REPO, "include")),
                "OPTRACE_LIBDIR")
    found = _pkg_config()
    if found and os.path.exists(os.path.join(found[0], "liboptrace.so")):
        return found[0], found[1], "pkg-config"
    libdir = os.path.join(REPO, ".output", "lib")
    if os.path.exists(os.path.join(libdir, "liboptrace.so")):
        return libdir, os.path.join(REPO, "include"), "the repository's build"
    raise RuntimeError(
        "optrace: no liboptrace to build the module against: install optrace "
        "(make install, or the liboptrace-dev package) so that `pkg-config optrace` "
        "finds it, or build it here first (make lib), or set OPTRACE_LIBDIR")


def _tag():
    impl = "cp" if sys.implementation.name == "cpython" else sys.implementation.name[:2]
    python = "%s%d%d" % (impl, sys.version_info[0], sys.version_info[1])
    abi = python + getattr(sys, "abiflags", "")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return python, abi, platform


def _compile(out_dir):
    libdir, includedir, origin = _liboptrace()
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = os.path.join(out_dir, "_optrace" + suffix)
    sources = sorted(os.path.join(HERE, f) for f in os.listdir(HERE) if f.endswith(".c"))
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    command = compiler + [
        "-O2", "-g", "-fPIC", "-shared", "-std=gnu11", "-pthread", "-fvisibility=hidden",
        "-fno-strict-aliasing", "-Wall", "-Wextra",
        "-I" + sysconfig.get_paths()["include"], "-I" + includedir,
        "-o", target] + sources + [
        "-L" + libdir, "-loptrace", "-Wl,-rpath," + libdir]
    sys.stderr.write("optrace: building the module against the liboptrace of %s (%s)\n"
                     % (origin, libdir))
    subprocess.run(command, check=True)
    return target


def _package_files():
    """(name in the wheel, path) of the package's Python files: python/optrace/*.py, each
    adapter's adapters/NAME/adapter.py as optrace/NAME.py, and optrace-adapters.pth."""
    files = [("optrace/" + f, os.path.join(HERE, "optrace", f))
             for f in sorted(os.listdir(os.path.join(HERE, "optrace"))) if f.endswith(".py")]
    # The repository's adapters/, or an sdist's copy of it.
    adapters = os.path.join(HERE, "adapters")
    if not os.path.isdir(adapters):
        adapters = os.path.join(REPO, "adapters")
    for name in sorted(os.listdir(adapters)) if os.path.isdir(adapters) else ():
        path = os.path.join(adapters, name, "adapter.py")
        if os.path.exists(path):
            files.append(("optrace/%s.py" % name, path))
    files.append(("optrace-adapters.pth", os.path.join(HERE, "optrace-adapters.pth")))
    return files


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Operations of Python array runtimes, traced through liboptrace\n"
            "Requires-Python: >=3.8\n" % (NAME, VERSION))


def _wheel_text(tag):
    return ("Wheel-Version: 1.0\nGenerator: optrace_build\nRoot-Is-Purelib: false\n"
            "Tag: %s-%s-%s\n" % tag)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = "%s-%s.dist-info" % (NAME, VERSION)
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w") as f:
        f.write(_metadata())
    with open(os.path.join(metadata_directory, info, "WHEEL"), "w") as f:
        f.write(_wheel_text(_tag()))
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = _tag()
    info = "%s-%s.dist-info" % (NAME, VERSION)
    wheel_name = "%s-%s-%s-%s-%s.whl" % ((NAME, VERSION) + tag)
    with tempfile.TemporaryDirectory() as build:
        module = _compile(build)
        files = [("optrace/" + os.path.basename(module), open(module, "rb").read())]
        for name, path in _package_files():
            with open(path, "rb") as f:
                files.append((name, f.read()))
        files += [(info + "/METADATA", _metadata().encode()),
                  (info + "/WHEEL", _wheel_text(tag).encode())]
        record = "".join(_record_line(name, data) for name, data in files)
        record += info + "/RECORD,,\n"
        path = os.path.join(wheel_directory, wheel_name)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
            for name, data in files:
                wheel.writestr(name, data)
            wheel.writestr(info + "/RECORD", record)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    base = "%s-%s" % (NAME, VERSION)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as sdist:
        for name in sorted(os.listdir(HERE)):
            if name.endswith((".c", ".h", ".toml", ".pth")) or name in ("build_backend",
                                                                        "optrace"):
                sdist.add(os.path.join(HERE, name), arcname=base + "/" + name,
                          filter=lambda t: None if "__pycache__" in t.name else t)
        sdist.add(os.path.join(REPO, "adapters"), arcname=base + "/adapters",
                  filter=lambda t: None if "__pycache__" in t.name else t)
        pkg_info = tarfile.TarInfo(base + "/PKG-INFO")
        data = _metadata().encode()
        pkg_info.size = len(data)
        import io
        sdist.addfile(pkg_info, io.BytesIO(data))
    return base + ".tar.gz"
