# net_udp.py N: sends N numbered datagrams from one UDP socket to another on 127.0.0.1, in
# batches it reads back at once (so the kernel never drops one), and prints the numbers received,
# one line. A datagram on loopback is in the receiver's queue when sendto returns, so a batch is
# read back without waiting. Under RLT_NET=loss=... the missing numbers are the drops (test_net_loss.sh).
import socket, sys
n = int(sys.argv[1])
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(('127.0.0.1', 0))
r.setblocking(False)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
got = []
for i in range(n):
    s.sendto(b'%d' % i, r.getsockname())
    if i % 50 == 49 or i == n - 1:
        try:
            while True:
                got.append(int(r.recv(100)))
        except BlockingIOError:
            pass
print(' '.join(map(str, got)))
