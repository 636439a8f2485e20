"""lit's ShTest, with each test in its own HOME, cache and temporary folders.

Every test runs with HOME, XDG_CACHE_HOME (so ciq's default cache,
$XDG_CACHE_HOME/ciq) and TMPDIR set to fresh, empty folders beside its %t
(Output/NAME.home, NAME.cache, NAME.tmpdir), never the user's: a test that
sets no CIQ_CACHE_DIR writes its counters and tool identities there, not
into ~/.cache/ciq. A test that leaves anything in its HOME fails, naming
what it left: nothing ciq or a test runs should write there (the cache
belongs under XDG_CACHE_HOME). TMPDIR is removed after a passing test and
kept after a failing one.
"""
import copy
import os
import shutil

import lit.formats
import lit.Test
import lit.TestRunner


class IsolatedShTest(lit.formats.ShTest):
    """ShTest in the test's own HOME, XDG_CACHE_HOME and TMPDIR; fails a test that wrote into HOME."""

    def execute(self, test, litConfig):
        _, tmp_base = lit.TestRunner.getTempPaths(test)
        folders = {"HOME": tmp_base + ".home", "XDG_CACHE_HOME": tmp_base + ".cache", "TMPDIR": tmp_base + ".tmpdir"}
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
        # The test's own copy of the configuration: tests run side by side.
        test.config = copy.copy(test.config)
        test.config.environment = dict(test.config.environment, **folders)
        result = super().execute(test, litConfig)
        left = []
        for parent, dirs, files in os.walk(folders["HOME"]):
            left += [os.path.relpath(os.path.join(parent, name), folders["HOME"]) for name in sorted(dirs + files)]
        if left and not result.code.isFailure:
            output = result.output + "\nciq lit: the test wrote into its HOME (%s), which must stay empty:\n  %s\n" % (
                folders["HOME"], "\n  ".join(left[:20]))
            result = lit.Test.Result(lit.Test.FAIL, output, result.elapsed)
        if not result.code.isFailure:
            shutil.rmtree(folders["TMPDIR"], ignore_errors=True)  # kept for a failure's post-mortem
        return result
