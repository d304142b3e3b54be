# gate.py: the calls that the preload's gate (preload/fdtable.h rlt_pre_passes) must not let
# straight through, run under the preload by test_gate.sh. Fd 3 is a TCP connection to the
# matched port P, opened by the shell before this program (and the library) started; U is a
# UDP port matched by a rule, Q one that no rule matches. Prints "PHASE SECONDS" per phase.
import os, socket, sys, time

P, U, Q = (int(a) for a in sys.argv[1:4])
N, PIECE = 200, 1000  # 200 kB a phase: 0.9 s at the rule's 200 kB/s after its burst


def timed(name, send):
    t0 = time.monotonic()
    for _ in range(N):
        send(b"x" * PIECE)
    print(name, "%.3f" % (time.monotonic() - t0), flush=True)


rcv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rcv.bind(("127.0.0.1", U))
other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
other.bind(("127.0.0.1", Q))
# files first: their fds are classified not ours, and closed
null = os.open(os.devnull, os.O_WRONLY)
timed("devnull", lambda b: os.write(null, b))
# an fd never seen before its first call (made before the library loaded, kept over exec)
timed("inherited", lambda b: os.write(3, b))
# a number that was a file, then is a datagram socket with no peer: a rule may match each
# datagram's address, so its calls cannot pass at the gate
num = null
os.close(null)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print("reused", int(s.fileno() == num), flush=True)
timed("unconnected_unmatched", lambda b: s.sendto(b, ("127.0.0.1", Q)))
timed("unconnected_matched", lambda b: s.sendto(b, ("127.0.0.1", U)))
# connect() changes the rules that apply
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.connect(("127.0.0.1", Q))
timed("connected_unmatched", lambda b: c.send(b))
c.connect(("127.0.0.1", U))
timed("reconnected_matched", lambda b: c.send(b))
# a copy of a matched socket is matched
os.dup2(3, 40)
timed("dup", lambda b: os.write(40, b))
