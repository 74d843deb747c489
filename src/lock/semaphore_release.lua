-- Give our place in a semaphore back (an emptied sorted set disappears),
-- or a shared holder's place, or a waiting writer's mark; then wake the
-- waiters (src/claim/wake.rs), as release.lua does.
-- KEYS[1] the semaphore; KEYS[2] (optional) the queue of waiters, of which
-- it wakes the first; ARGV[1] our token (or mark); ARGV[2] the wake
-- channel ('' for none); ARGV[3] 'spublish' on a Redis Cluster, else
-- 'publish'; ARGV[4] (optional) our own place in the queue ('' for none)
-- Returns 1 when our place was still live and is now free, 0 when it was
-- not there or had already expired (it is removed all the same).
if redis.call('TYPE', KEYS[1])['ok'] ~= 'zset' then
  return 0
end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
-- wake: the prelude src/claim/wake.lua.
wake(ARGV[2], ARGV[3], KEYS[2], ARGV[4])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(score) > now then
  return 1
end
return 0
