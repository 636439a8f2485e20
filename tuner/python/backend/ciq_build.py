"""The ciq package's build backend (PEP 517, and PEP 660 for `pip install -e`).

Standard library only, so that `pip install tuner/python` needs no network:
pyproject.toml asks for no build requirements, and pip loads this module from
backend/ (backend-path). What it builds, from the directory above this one:

- a wheel ciq-VERSION-py3-none-any.whl: the ciq/ package (its .py files and
  py.typed) and the metadata pyproject.toml's [project] table gives, with the
  version of ciq/_version.py;
- an editable wheel: a .pth file naming that directory, so `import ciq`
  reads the source tree;
- an sdist: pyproject.toml, backend/ and ciq/.

Archives are reproducible: entries sorted, times fixed, modes 0644.

Why ciq carries its own backend rather than naming setuptools: measured on
Debian 12 (pip 23.0.1 in a fresh `python3 -m venv`, no network, 2026-12-06),
`build-backend = "setuptools.build_meta"` makes `pip install tuner/python`
fail while "Installing build dependencies" (pip's build isolation asks an
index for setuptools: "Name or service not known"), and
`--no-build-isolation` fails too: the venv has setuptools 66 but not the
`wheel` package ("invalid command 'bdist_wheel'"). A backend in the tree is
the PEP 517 way (backend-path) to need no index and no flag at all.
"""
import base64
import gzip
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "ciq"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def _project():
    """pyproject.toml's [project] table: its `key = "string"` entries (all it holds)."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        text = f.read().decode("utf-8")
    try:
        import tomllib  # Python 3.11+
        return tomllib.loads(text)["project"]
    except ImportError:
        table, project = None, {}
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("["):
                table = line
            elif table == "[project]":
                m = re.match(r'^([A-Za-z-]+)\s*=\s*"([^"]*)"', line)
                if m:
                    project[m.group(1)] = m.group(2)
        return project


def _version():
    with open(os.path.join(ROOT, PACKAGE, "_version.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError(f"no __version__ = \"...\" line in {os.path.join(ROOT, PACKAGE, '_version.py')}")
    return m.group(1)


def _metadata():
    project = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {_version()}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    return "\n".join(lines) + "\n"


def _package_files():
    """(path inside the archive, path on disk) of ciq/'s sources, sorted."""
    files = []
    for directory, subdirs, names in os.walk(os.path.join(ROOT, PACKAGE)):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in names:
            if name.endswith(".py") or name == "py.typed":
                path = os.path.join(directory, name)
                files.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), path))
    return sorted(files)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write_wheel(wheel_directory, entries):
    """A wheel of `entries` ((name, bytes)) and its dist-info; returns its file name."""
    name, version = _project()["name"], _version()
    dist_info = f"{name}-{version}.dist-info"
    entries = list(entries) + [
        (f"{dist_info}/METADATA", _metadata().encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: ciq_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = []
    for arcname, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(arcname, _read(path)) for arcname, path in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(f"__editable__.{PACKAGE}.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = f"{_project()['name']}-{_version()}"
    files = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
             ("backend/ciq_build.py", os.path.abspath(__file__))] + _package_files()
    members = [(arcname, _read(path)) for arcname, path in files] + [("PKG-INFO", _metadata().encode())]
    sdist = base + ".tar.gz"
    with gzip.GzipFile(os.path.join(sdist_directory, sdist), "wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for arcname, data in sorted(members):
            info = tarfile.TarInfo(f"{base}/{arcname}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return sdist
