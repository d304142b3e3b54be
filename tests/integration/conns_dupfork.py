# conns_dupfork.py PORT NAME: a connection accepted under "2 scope=shared:NAME", copied to a
# higher fd with its first fd closed, then held and closed in two processes (a fork). Prints the
# segment's open count after each step ("STEP N").
import os, socket, subprocess, sys, time

port, name = int(sys.argv[1]), sys.argv[2]
launcher = os.environ["RLT_LAUNCHER"]


def count(step):
    out = subprocess.run([launcher, "shm", "list"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.split() and line.split()[0] == name:
            print(step, line.split("(now ")[1].split(")")[0], flush=True)
            return
    print(step, "none", flush=True)


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(4)
# the client is another process, not throttled: only the accept counts
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("RLT_")}
cl = subprocess.Popen(["python3", "-c", "import socket,sys,time; c=socket.create_connection(('127.0.0.1',%d)); time.sleep(3)" % port], env=env)
c, _ = s.accept()
count("accepted")
high = os.dup2(c.fileno(), 700)
c.close()
count("moved")
pid = os.fork()
if pid == 0:
    time.sleep(0.2)
    os.close(high)
    os._exit(0)
os.waitpid(pid, 0)
count("child_closed")
os.close(high)
count("parent_closed")
cl.kill()
