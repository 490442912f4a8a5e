"""interrupt.py SIGNAL DELAY LOG COMMAND...

Runs COMMAND (its stdout and stderr to the file LOG) with SIGINT and SIGTERM
at their default dispositions, sends it SIGNAL (INT or TERM) after DELAY
seconds, like a Ctrl-C or a kill, and waits for it. lit's workers ignore
SIGINT, and so would COMMAND without this, as would a command started with
`&` by a shell without job control.

Prints "status ok" if COMMAND died of SIGNAL or had already finished with
exit code 0 (a slow machine may not get there in time; the caller's checks
must hold either way), else "status unexpected: ..." .
"""
import signal
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    sig = getattr(signal, "SIG" + sys.argv[1])
    delay = float(sys.argv[2])
    with open(sys.argv[3], "w") as log:

        def defaults():
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

        proc = subprocess.Popen(
            sys.argv[4:], stdout=log, stderr=subprocess.STDOUT, preexec_fn=defaults
        )
        try:
            proc.wait(timeout=delay)
            sys.stderr.write("interrupt.py: finished before the signal\n")
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
            sys.stderr.write("interrupt.py: sent SIG%s\n" % sys.argv[1])
        code = proc.wait()
    if code == 0 or code == -sig:
        print("status ok")
    else:
        print("status unexpected: exit code %d" % code)


if __name__ == "__main__":
    main()
