"""The compiled distributions a platform-specific .vsix ships (``bundled/native/cp3XX/*.whl``, made
by ``scripts/bundle_server.py --target``), unpacked once for this interpreter into the folder the
client names (``COHERENCE_NATIVE_DIR``, in the extension's storage; else beside the wheels), so the
bundled server starts with no install and no network.  Wheels stay zipped in the .vsix (few files);
an extension module cannot be imported from a zip, hence the unpacking.
"""

import hashlib
import os
import shutil
import sys
import tempfile
import zipfile

from _paths import NATIVE


def tag():
    """This interpreter's folder name in ``bundled/native`` (``cp311``)."""
    return "cp%d%d" % sys.version_info[:2]


def wheels():
    folder = os.path.join(NATIVE, tag())
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".whl"))


def site():
    """The folder holding this interpreter's unpacked compiled distributions (unpacked now if it
    is not yet), or None when the .vsix ships none for it (another platform, another Python)."""
    found = wheels()
    if not found:
        return None
    names = "\0".join("%s:%d" % (os.path.basename(w), os.path.getsize(w)) for w in found)
    key = hashlib.sha256(names.encode()).hexdigest()[:12]
    root = os.environ.get("COHERENCE_NATIVE_DIR") or os.path.join(NATIVE, "unpacked")
    dest = os.path.join(root, "%s-%s" % (tag(), key))
    if os.path.isfile(os.path.join(dest, ".complete")):
        return dest
    os.makedirs(root, exist_ok=True)
    # unpacked beside it, then renamed: a server and a probe starting together never see half of it
    tmp = tempfile.mkdtemp(prefix=".%s-" % tag(), dir=root)
    try:
        for wheel in found:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(tmp)
        open(os.path.join(tmp, ".complete"), "w").close()
        try:
            os.rename(tmp, dest)
        except OSError:
            if not os.path.isfile(os.path.join(dest, ".complete")):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
