"""Checks that a writer replaces a file atomically.

usage: atomic-write.py kill TARGET -- COMMAND [ARG]...
       atomic-write.py stale TARGET -- COMMAND [ARG]...

kill: TARGET exists. COMMAND writes a different TARGET. Runs COMMAND, watches
/proc/PID/fd until it has a file open for writing in TARGET's folder that
holds some bytes (the new file, growing), and kills it there with SIGKILL. Then TARGET must hold
its old bytes, and the folder no temporary file ("*.tmp-*", or any file
that was not there before). A run that finishes before it is caught, or
whose kill comes after the new file took TARGET's name (TARGET then holds
the new file, complete), proves nothing: the command is run again, up to 30
times, and it fails unless one run was killed mid-write.

stale: puts temporaries of TARGET in its folder, as a killed writer leaves
them (".NAME.tmp-XXXXXX", or "NAME.tmp-XXXXXX" from an older version), one
of them locked (flock) as a live writer holds its own, and TARGET read-only
(0444). After COMMAND writes TARGET, the unlocked temporaries must be gone,
the locked one kept, and TARGET 0444 still.
"""
import fcntl
import os
import signal
import stat
import subprocess
import sys
import time

ATTEMPTS = 30


def fail(message):
    sys.exit("atomic-write.py: " + message)


def write_fds(pid, folder):
    """The descriptors `pid` has open for writing on files in `folder`, with
    their sizes."""
    found = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                flags = int(info.read().split("flags:")[1].split()[0], 8)
            size = os.stat(f"/proc/{pid}/fd/{fd}").st_size
        except (OSError, IndexError, ValueError):
            continue
        if flags & os.O_ACCMODE != os.O_RDONLY and \
                link.startswith(folder + "/"):
            found.append((link, size))
    return found


def kill(target, command):
    folder = os.path.dirname(os.path.abspath(target))
    with open(target, "rb") as f:
        old = f.read()
    before = set(os.listdir(folder))
    for attempt in range(1, ATTEMPTS + 1):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        caught = None
        while process.poll() is None:
            caught = [(link, size) for link, size in
                      write_fds(process.pid, folder) if size > 0]
            if caught:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.0002)
        process.wait()
        left = sorted(set(os.listdir(folder)) - before)
        if left:
            fail(f"attempt {attempt}: the killed writer left {left} "
                 f"(it had {caught} open)")
        with open(target, "rb") as f:
            now = f.read()
        if not caught:
            print(f"attempt {attempt}: finished before it was caught")
            continue
        if now == old:
            print(f"killed mid-write with {caught} open: the old file is "
                  f"intact, and no temporary is left")
            return
        # The kill came after the new file took the name, so the new file
        # must be complete: another run shows it byte for byte.
        print(f"attempt {attempt}: killed after the new file was in place")
        complete = target + ".complete"
        if subprocess.run([a.replace(target, complete) for a in command],
                          stdout=subprocess.DEVNULL).returncode != 0:
            fail("the command fails")
        with open(complete, "rb") as f:
            if f.read() != now:
                fail(f"attempt {attempt}: {target} is neither the old file "
                     "nor the complete new one")
        os.unlink(complete)
        with open(target, "wb") as f:
            f.write(old)
    fail(f"no run was killed mid-write in {ATTEMPTS} attempts")


def stale(target, command):
    folder, name = os.path.split(os.path.abspath(target))
    stale = [f".{name}.tmp-a1b2c3", f"{name}.tmp-Xy9Z0q"]
    live = f".{name}.tmp-live00"
    for entry in stale + [live]:
        with open(os.path.join(folder, entry), "wb") as f:
            f.write(b"partial")
    holder = open(os.path.join(folder, live), "rb")
    fcntl.flock(holder, fcntl.LOCK_EX)
    os.chmod(target, 0o444)
    if subprocess.run(command, stdout=subprocess.DEVNULL).returncode != 0:
        fail("the command fails")
    entries = set(os.listdir(folder))
    kept = [entry for entry in stale if entry in entries]
    if kept:
        fail(f"stale temporaries are left: {kept}")
    if live not in entries:
        fail(f"the temporary {live}, locked by a live writer, was removed")
    mode = stat.S_IMODE(os.stat(target).st_mode)
    if mode != 0o444:
        fail(f"{target} has mode {mode:o} instead of 444")
    holder.close()
    os.unlink(os.path.join(folder, live))
    print("stale temporaries removed, the locked one kept, the mode kept")


if len(sys.argv) < 5 or sys.argv[3] != "--" or \
        sys.argv[1] not in ("kill", "stale"):
    sys.exit(__doc__)
{"kill": kill, "stale": stale}[sys.argv[1]](sys.argv[2], sys.argv[4:])
