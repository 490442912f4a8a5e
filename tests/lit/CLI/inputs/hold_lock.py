"""Holds an exclusive lock on a file until killed (for tune-gpu-lock.test).

  hold_lock.py FILE READY

Locks FILE (a POSIX record lock, fcntl F_SETLKW, as mtc's tuner does;
flock() locks would not exclude it), then creates READY and sleeps."""
import fcntl
import sys
import time

with open(sys.argv[1], "a") as f:
    fcntl.lockf(f, fcntl.LOCK_EX)
    open(sys.argv[2], "w").close()
    while True:
        time.sleep(1)
