-- Extend our place in a semaphore, or our shared place in a lock.
-- KEYS[1] the semaphore (sorted set: token -> expiry, server ms)
-- ARGV[1] our token, ARGV[2] ttl in ms, ARGV[3] unused,
-- ARGV[4] 'shared' for a shared place: a string at the key is then an
--         exclusive holder's, who took the lock after our place expired
-- Returns {1} extended; {3} our place is gone (expired: it may have been
-- given to someone else, so it is not taken back); {4, type} another type.
local key, token = KEYS[1], ARGV[1]
local t = redis.call('TYPE', key)['ok']
if t == 'none' then
  return {3}
end
if t == 'string' and ARGV[4] == 'shared' then
  return {3}
end
if t ~= 'zset' then
  return {4, t}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local score = redis.call('ZSCORE', key, token)
if not score or tonumber(score) <= now then
  if score then
    redis.call('ZREM', key, token)
  end
  return {3}
end
redis.call('ZADD', key, 'XX', now + tonumber(ARGV[2]), token)
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', key, string.format('%.0f', tonumber(last[2])))
return {1}
