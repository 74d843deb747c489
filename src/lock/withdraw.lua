-- Gives back an attempt that failed: frees the lock on one node if it holds
-- our token (as release.lua does) and, if our fencing vote there is still the
-- counter's value, puts back the value it replaced. A failed attempt then
-- leaves the counters as it found them.
--
-- Why putting it back is safe: we held this node's lock from our vote until
-- this script (the key is still ours), and a vote counts only where its SET
-- took the lock, so nobody else voted here meanwhile; the counter still being
-- our number says the same. Our number was never handed out, so no holder
-- relies on it; every number handed out before it is still at most the value
-- put back.
-- KEYS[1] the lock, KEYS[2] the fencing counter
-- ARGV[1] our token, ARGV[2] our vote, ARGV[3] the counter before it ('0':
--         there was none)
-- Returns 1 when the lock was freed, 0 when it was not ours.
if redis.pcall('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if redis.pcall('GET', KEYS[2]) == ARGV[2] then
  if ARGV[3] == '0' then
    redis.call('DEL', KEYS[2])
  else
    redis.call('SET', KEYS[2], ARGV[3])
  end
end
return 1
