-- Undoes an attempt that failed: frees the lock on one node if it holds
-- our token (as release.lua does) and, if our fencing vote there is still the
-- counter's value, withdraws it: puts back the value it replaced. A failed attempt then
-- leaves the counters as it found them.
--
-- Why putting it back is safe: we held this node's lock from our vote until
-- this script (the key is still ours), and a vote counts only where its SET
-- took the lock, so nobody else voted here meanwhile; the counter still being
-- our number says the same. Our number was never handed out, so no holder
-- relies on it; every number handed out before it is still at most the value
-- put back.
-- KEYS[1] the lock, KEYS[2] the fencing counter, KEYS[3] (optional) the
-- queue of waiters, of which it wakes the first
-- ARGV[1] our token, ARGV[2] our vote, ARGV[3] the counter before it (put
--         back exactly: a node whose counter was missing never voted, so
--         there is always one, and a missing counter is never made 0);
--         ARGV[4] the wake channel ('' for none), ARGV[5] 'spublish' on a
--         Redis Cluster, else 'publish': waiters that found our failed
--         attempt's key are woken when it goes (src/claim/wake.rs);
--         ARGV[6] (optional) our own place in the queue ('' for none): the
--         failed attempt must not wake its own waiter
-- Returns {freed, lacks}, as release.lua does: freed 1 when the lock was
-- freed, 0 when it was not ours; lacks 1 when the fencing counter is not a
-- counter here.
local function lacks()
  local counter = redis.pcall('GET', KEYS[2])
  if type(counter) ~= 'string' or not string.find(counter, '^%d+$') then
    return 1
  end
  return 0
end
if redis.pcall('GET', KEYS[1]) ~= ARGV[1] then
  return {0, lacks()}
end
redis.call('DEL', KEYS[1])
-- wake: the prelude src/claim/wake.lua.
wake(ARGV[4], ARGV[5], KEYS[3], ARGV[6])
if redis.pcall('GET', KEYS[2]) == ARGV[2] then
  redis.call('SET', KEYS[2], ARGV[3])
end
return {1, lacks()}
