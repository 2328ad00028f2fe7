"""ikd_build.py - a PEP 517 build backend of the standard library alone, so that the ikd client
installs with no network and no setuptools: a wheel is the package's files, its metadata and
its RECORD, zipped."""
import base64
import hashlib
import os
import zipfile

NAME, VERSION = "ikd", "1.0.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST = "%s-%s" % (NAME, VERSION)
METADATA = """Metadata-Version: 2.1
Name: ikd
Version: 1.0.0
Summary: Client for ikd, the inverse-kinematics solving service
Requires-Python: >=3.8
License: MIT
Provides-Extra: msgpack
Requires-Dist: msgpack; extra == "msgpack"
"""
WHEEL = "Wheel-Version: 1.0\nGenerator: ikd_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
ENTRY_POINTS = "[console_scripts]\nikd-client = ikd.__main__:main\n"


def _files():
    pkg = os.path.join(ROOT, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            yield "%s/%s" % (NAME, name), open(os.path.join(pkg, name), "rb").read()


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "%s-py3-none-any.whl" % DIST
    info = "%s.dist-info" % DIST
    entries = list(_files()) + [("%s/METADATA" % info, METADATA.encode()), ("%s/WHEEL" % info, WHEEL.encode()),
                                ("%s/entry_points.txt" % info, ENTRY_POINTS.encode())]
    record = [_record_line(p, d) for p, d in entries] + ["%s/RECORD,," % info]
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in entries:
            z.writestr(p, d)
        z.writestr("%s/RECORD" % info, "\n".join(record) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    name = "%s.tar.gz" % DIST
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "_build/ikd_build.py"] + [p for p, _ in _files()]:
            t.add(os.path.join(ROOT, rel), arcname="%s/%s" % (DIST, rel))
    return name
