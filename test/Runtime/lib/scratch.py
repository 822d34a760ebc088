"""A temporary folder for the files a test writes, and the checks common to
the runtime's atomic file writers (write to a temporary, then rename)."""

import gzip
import os
import shutil
import tempfile

import fluidrt


class Scratch:
    def __init__(self, prefix):
        self.root = tempfile.mkdtemp(prefix=prefix)

    def path(self, name):
        return os.path.join(self.root, name)

    def save(self, name, content, compress=False):
        """Write bytes `content` (gzip-compressed if asked) to `name`."""
        file = self.path(name)
        with (gzip.open(file, "wb") if compress else open(file, "wb")) as f:
            f.write(content)
        return file

    def remove(self):
        shutil.rmtree(self.root)

    def expect_no_temporaries(self):
        """No writer's temporary file ("<name>.tmp-...") is left behind."""
        leftovers = [n for n in os.listdir(self.root) if ".tmp-" in n]
        assert not leftovers, leftovers

    def expect_write_failures(self, lib, write, suffix):
        """`write(file)` returns the status of writing `file`. Into a missing
        folder, and over a folder, it must fail with FLUID_ERROR_IO naming the
        file and the problem, and leave no temporary behind."""
        missing = self.path(f"no-such-dir/out{suffix}")
        fluidrt.expect_status(lib, write(missing), fluidrt.IO,
                              [missing, "cannot create temporary file",
                               "No such file or directory"])
        directory = self.path(f"a-directory{suffix}")
        os.mkdir(directory)
        fluidrt.expect_status(lib, write(directory), fluidrt.IO,
                              [directory, "not a regular file"])
        self.expect_no_temporaries()
