// node-redis and ioredis against `yaraus seq serve`, as a user's program
// would use them. Run by tests/seq_serve/node_clients.rs with NODE_PATH at
// the node_modules that scripts/install-test-tools.sh fills:
// `node node_clients.cjs PORT CLIENT`, CLIENT one of `node-redis` (its
// defaults), `node-redis-resp3` (RESP: 3), `ioredis`. It takes ids from two
// names one at a time, in a transaction (multi) and, for ioredis, a plain
// pipeline, and ids above 2^63 - 1; it asserts nothing itself but prints
// what it got as one JSON object (ids as decimal strings, so that the Rust
// test sees exactly what the client holds), for the Rust test to judge.
"use strict";

const text = (v) => (v === null || v === undefined ? null : String(v));

async function nodeRedis(port, resp) {
  const { createClient } = require("redis");
  const options = { url: `redis://127.0.0.1:${port}`, name: "node-redis" };
  if (resp) options.RESP = resp;
  const c = createClient(options);
  const errors = [];
  c.on("error", (e) => errors.push(String(e)));
  await c.connect();
  const out = { errors, a: [], b: [] };
  const hello = await c.sendCommand(["HELLO"]);
  out.proto = text(hello instanceof Map ? hello.get("proto") : Array.isArray(hello)
    ? hello[hello.indexOf("proto") + 1] : hello.proto);
  for (let i = 0; i < 10; i++) {
    out.a.push(text(await c.incr("a")));
    out.b.push(text(await c.incr("b")));
  }
  const tx = await c.multi().incr("a").incr("b").incrBy("a", 3).get("a").exec();
  out.multi = tx.map(text);
  out.big = [];
  for (let i = 0; i < 3; i++) out.big.push(text(await c.incr("big")));
  out.nothing = text(await c.get("nothing"));
  c.destroy();
  return out;
}

async function ioredis(port) {
  const Redis = require("ioredis");
  const c = new Redis({ port, host: "127.0.0.1", connectionName: "ioredis", lazyConnect: true });
  const errors = [];
  c.on("error", (e) => errors.push(String(e)));
  await c.connect();
  const out = { errors, a: [], b: [], proto: "2" };
  for (let i = 0; i < 10; i++) {
    out.a.push(text(await c.incr("a")));
    out.b.push(text(await c.incr("b")));
  }
  const tx = await c.multi().incr("a").incr("b").incrby("a", 3).get("a").exec();
  out.multi = tx.map(([e, v]) => (e ? `error: ${e}` : text(v)));
  const pipe = await c.pipeline().incr("a").incr("b").incr("a").exec();
  out.pipeline = pipe.map(([e, v]) => (e ? `error: ${e}` : text(v)));
  out.big = [];
  for (let i = 0; i < 3; i++) out.big.push(text(await c.incr("big")));
  out.nothing = text(await c.get("nothing"));
  c.disconnect();
  return out;
}

async function main() {
  const [port, client] = [Number(process.argv[2]), process.argv[3]];
  let out;
  if (client === "node-redis") out = await nodeRedis(port, null);
  else if (client === "node-redis-resp3") out = await nodeRedis(port, 3);
  else if (client === "ioredis") out = await ioredis(port);
  else throw new Error(`unknown client ${client}`);
  out.client = client;
  console.log(JSON.stringify(out));
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e && e.stack ? e.stack : String(e));
    process.exit(1);
  },
);
