"""redis-py against `yaraus seq serve`, as a user's program would use it.

Run by tests/seq_serve/redis_py.rs with the Python of one of the virtual
environments that scripts/install-test-tools.sh makes (redis-py alone, or
with hiredis): `python redis_py.py PORT MODE`, MODE one of `default`
(redis.Redis(port=...) as it comes: RESP3 in redis-py 8), `2` and `3`
(protocol= given), `url` (redis.from_url), `auth` (the default protocol
with the password of $SEQ_PASSWORD: `HELLO 3 AUTH default ...`). It takes ids from two names,
one at a time, in a transaction pipeline (the default) and in a plain
one (200 INCR + GET pairs in one, each GET after its INCR), reads ids above 2^63 - 1, and checks that a transaction refused while
queuing raises and writes nothing. It asserts nothing itself: it prints
what it got as one JSON object, and the Rust test judges it, so that a
failure shows the data.
"""

import json
import os
import sys

import redis
import redis.utils


def as_text(value):
    """An id as the client gave it: its digits, and the Python type."""
    kind = type(value).__name__
    if isinstance(value, bytes):
        value = value.decode()
    return [str(value), kind]


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    if mode == "url":
        r = redis.from_url(f"redis://127.0.0.1:{port}/0", client_name="py-url")
    elif mode == "auth":
        r = redis.Redis(
            port=port, password=os.environ["SEQ_PASSWORD"], client_name="py-auth"
        )
    elif mode == "default":
        r = redis.Redis(port=port, client_name="py-default")
    else:
        r = redis.Redis(port=port, protocol=int(mode), client_name=f"py-{mode}")
    out = {"redis_py": redis.__version__, "hiredis": redis.utils.HIREDIS_AVAILABLE}
    conn = r.connection_pool.get_connection()
    out["protocol"] = conn.get_protocol()
    meta = conn.handshake_metadata or {}
    out["hello_proto"] = meta.get(b"proto", meta.get("proto"))
    out["parser"] = type(conn._parser).__name__
    r.connection_pool.release(conn)
    out["client_name"] = as_text(r.client_getname())[0]

    out["a"], out["b"] = [], []
    for _ in range(10):
        out["a"].append(r.incr("a"))
        out["b"].append(r.incr("b"))
    out["a"].append(r.incrby("a", 5))

    pipe = r.pipeline()  # a transaction: MULTI ... EXEC
    pipe.incr("a").incr("b").incrby("a", 3).get("a")
    out["pipeline"] = [as_text(v)[0] for v in pipe.execute()]
    pipe = r.pipeline(transaction=False)
    pipe.incr("a").incr("b").incr("a")
    out["plain_pipeline"] = pipe.execute()
    pipe = r.pipeline(transaction=False)
    for _ in range(200):
        pipe.incr("c").get("c")
    # A null GET (no node held "c" yet) is older than any INCR: 0.
    out["incr_get"] = [0 if v is None else as_text(v)[0] for v in pipe.execute()]

    before = r.get("a")
    pipe = r.pipeline()
    pipe.incr("a").incrby("a", 0).incr("a")
    try:
        pipe.execute()
        out["aborted"] = None
    except redis.ResponseError as e:
        out["aborted"] = str(e)
    out["unchanged"] = r.get("a") == before

    out["big"] = [as_text(r.incr("big")) for _ in range(3)]
    out["nothing"] = r.get("nothing")
    out["ping"] = r.ping()
    print(json.dumps(out))


main()
