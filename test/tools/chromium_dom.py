#!/usr/bin/env python3
"""Print the DOM headless Chromium lays out for a page: chromium_dom.py URL.

Chromium puts its singleton socket in $TMPDIR and aborts when that path
exceeds the 107 bytes a Unix socket address holds; a test's own TMPDIR
(Output/NAME.tmpdir) passes that in a checkout a few characters deeper
than /work/main (CI's /check/work/main aborted). So Chromium gets a
fresh, private folder under /tmp for its temporary files, its profile and
its crash reports, removed afterwards; nothing is written into HOME.
"""
import shutil
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: chromium_dom.py URL")
    folder = tempfile.mkdtemp(prefix="ciq-chromium.", dir="/tmp")  # mode 0700, O_EXCL
    try:
        env = {"TMPDIR": folder, "XDG_CONFIG_HOME": folder + "/config", "XDG_CACHE_HOME": folder + "/cache"}
        command = ["env"] + ["%s=%s" % item for item in env.items()] + [
            "chromium", "--headless", "--no-sandbox", "--disable-gpu",
            "--user-data-dir=" + folder + "/profile", "--dump-dom", sys.argv[1]]
        return subprocess.run(command).returncode
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
