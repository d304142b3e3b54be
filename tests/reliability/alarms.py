"""alarms.py: the SIGALRM the signal tests' python programs run under: every INTERVAL seconds
(setitimer), a handler that counts its runs and writes a byte to /dev/null (a system call of
its own in the middle of the program's)."""
import os
import signal

_devnull = os.open("/dev/null", os.O_WRONLY)
handlers = 0


def _on_alarm(signum, frame):
    global handlers
    handlers += 1
    os.write(_devnull, b"x")


def start(interval):
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, interval, interval)


def stop():
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
