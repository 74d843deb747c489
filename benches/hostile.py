#!/usr/bin/env python3
"""seq serve against hostile clients and routine node faults: the figures of
docs/benchmarks.md ("seq serve under hostile clients and node faults").

Starts three redis-servers (appendfsync always) and one `yaraus seq serve`
with --metrics-listen and --requirepass, then replays, with raw sockets
(no client library):

  * a node switched to appendfsync everysec and back: how long until INFO
    health says not_durable, and ok again;
  * 10,000 new sequence names after a node restart: the nodes' client counts
    and serve's open descriptors before and after;
  * MULTI, 1,024 x INFO, EXEC with those 10,000 sequences (INFO ~1 MB):
    what the transaction gets, how long a PING on another connection waits,
    and serve's peak RSS growth;
  * 5,000 idle connections to the metrics port: serve's descriptors, and
    how long /readyz takes meanwhile;
  * wrong passwords on one connection: how long three take, and what then.

Usage: python3 benches/hostile.py [path/to/yaraus]   (default: target/release/yaraus,
else target/debug/yaraus). Needs redis-server on PATH and ports 17101-17103,
17480, 17481 free. Figures are wall-clock, from one run: a sketch, not a bench.
"""
import os, socket, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NODES = [17101, 17102, 17103]
PORT, METRICS, PASSWORD = 17480, 17481, "s3cret"


def yaraus_binary():
    if len(sys.argv) > 1:
        return sys.argv[1]
    for build in ("release", "debug"):
        path = os.path.join(ROOT, "target", build, "yaraus")
        if os.path.exists(path):
            return path
    sys.exit("build yaraus first (cargo build --release)")


class Conn:
    """A raw RESP client: inline requests out, whole replies in."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, *lines):
        self.s.sendall(b"".join(l.encode() + b"\r\n" for l in lines))

    def _line(self):
        while b"\r\n" not in self.buf:
            more = self.s.recv(1 << 20)
            if not more:
                raise EOFError("closed")
            self.buf += more
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in b"+-:":
            return line.decode(errors="replace")
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                more = self.s.recv(1 << 20)
                if not more:
                    raise EOFError("closed")
                self.buf += more
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise ValueError(line)

    def ask(self, *words):
        self.send(" ".join(words))
        return self.reply()


def start_node(port, procs):
    d = tempfile.mkdtemp(prefix="hostile-")
    args = ["redis-server", "--port", str(port), "--dir", d, "--save", "",
            "--appendonly", "yes", "--appendfsync", "always", "--maxclients", "20000"]
    procs[port] = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    wait_for(lambda: ping(port), f"redis-server on {port}")
    return args


def ping(port):
    try:
        return Conn(port).ask("PING") == "+PONG"
    except OSError:
        return False


def wait_for(cond, what, limit=30):
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.01)


def status(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field):
            return int(line.split()[1])


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def main():
    procs = {}
    serve = None
    try:
        args = {p: start_node(p, procs) for p in NODES}
        cmd = [yaraus_binary(), "seq", "serve", "--listen", f"127.0.0.1:{PORT}",
               "--metrics-listen", f"127.0.0.1:{METRICS}", "--requirepass", PASSWORD,
               "--max-clients", "10000"]
        for p in NODES:
            cmd += ["--redis", f"redis://127.0.0.1:{p}"]
        serve = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
        wait_for(lambda: ping_serve(), "seq serve")
        c = Conn(PORT)
        c.ask("AUTH", PASSWORD)

        def health(field):
            text = c.ask("INFO", "health").decode()
            return next(l.split(":", 1)[1] for l in text.split("\r\n") if l.startswith(field + ":"))

        wait_for(lambda: health("ready") == "1", "ready")
        print(f"INCR orders -> {c.ask('INCR', 'orders')}")

        n2 = Conn(NODES[2])
        n2.ask("CONFIG", "SET", "appendfsync", "everysec")
        t = time.monotonic()
        wait_for(lambda: health("node2").endswith("state=not_durable"), "not_durable")
        print(f"node switched to everysec: not_durable after {time.monotonic() - t:.2f} s")
        n2.ask("CONFIG", "SET", "appendfsync", "always")
        t = time.monotonic()
        wait_for(lambda: health("node2").endswith("state=ok"), "ok")
        print(f"switched back to always: ok after {time.monotonic() - t:.2f} s")

        procs[NODES[2]].kill()
        procs[NODES[2]].wait()
        procs[NODES[2]] = subprocess.Popen(args[NODES[2]], stdout=subprocess.DEVNULL)
        wait_for(lambda: ping(NODES[2]), "restarted node")
        wait_for(lambda: health("node2").endswith("state=ok") and clients(NODES[2]) >= 2,
                 "serve reconnected to the restarted node")
        before = [clients(p) for p in NODES]
        fds_before = fds(serve.pid)
        t = time.monotonic()
        for batch in range(10):
            c.send(*[f"INCR s{batch * 1000 + i:05d}" for i in range(1000)])
            replies = [c.reply() for _ in range(1000)]
            bad = [r for r in replies if not str(r).startswith(":")]
            if bad:
                print(f"  {len(bad)} errors, first: {bad[0]}")
        print(f"10,000 new names after a node restart: {time.monotonic() - t:.1f} s; node clients "
              f"{before} -> {[clients(p) for p in NODES]}; serve fds {fds_before} -> {fds(serve.pid)}")

        t = time.monotonic()
        size = len(c.ask("INFO"))
        print(f"INFO with 10,000 sequences: {size} bytes in {(time.monotonic() - t) * 1000:.0f} ms")
        open(f"/proc/{serve.pid}/clear_refs", "w").write("5")
        hwm = status(serve.pid, "VmHWM")
        h = Conn(PORT)
        h.ask("AUTH", PASSWORD)
        h.send("MULTI", *["INFO"] * 1024)
        for _ in range(1025):
            h.reply()
        p = Conn(PORT)
        p.ask("AUTH", PASSWORD)
        h.send("EXEC")
        t = time.monotonic()
        pong = p.ask("PING")
        waited = time.monotonic() - t
        try:
            got = h.reply()
            got = got if isinstance(got, str) else f"an array of {len(got)}"
        except EOFError:
            got = "the connection closed"
        print(f"MULTI + 1,024 INFO + EXEC: {str(got)[:90]}; a PING meanwhile: {pong} after "
              f"{waited * 1000:.0f} ms; peak RSS +{(status(serve.pid, 'VmHWM') - hwm) / 1024:.1f} MB")

        fds_before = fds(serve.pid)
        idle = [socket.create_connection(("127.0.0.1", METRICS)) for _ in range(5000)]
        t = time.monotonic()
        s = socket.create_connection(("127.0.0.1", METRICS), timeout=30)
        s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = s.recv(100).split(b"\r\n")[0].decode()
        print(f"5,000 idle metrics connections: serve fds {fds_before} -> {fds(serve.pid)}; "
              f"/readyz {answer} in {(time.monotonic() - t) * 1000:.1f} ms")
        for sock in idle:
            sock.close()

        w = Conn(PORT)
        t = time.monotonic()
        said = []
        try:
            for _ in range(4):
                said.append(w.ask("AUTH", "guess"))
        except (EOFError, OSError):
            said.append("closed")
        print(f"wrong passwords: {said} in {time.monotonic() - t:.2f} s")
    finally:
        if serve:
            serve.kill()
        for proc in procs.values():
            proc.kill()


def ping_serve():
    try:
        return Conn(PORT).ask("PING") in ("+PONG", "-NOAUTH Authentication required.")
    except OSError:
        return False


def clients(port):
    text = Conn(port).ask("INFO", "clients").decode()
    return int(next(l.split(":")[1] for l in text.split("\r\n") if l.startswith("connected_clients")))


if __name__ == "__main__":
    main()
