-- Extend our lease on an id, if it is still ours.
-- KEYS[1] ns:ids, KEYS[2] ns:clients, KEYS[3] ns:stats, KEYS[4] ns:clock
-- ARGV[1] our client id, ARGV[2] encoded id, ARGV[3] lease length in milliseconds
-- ARGV[4] our horizon (the new deadline on our wall clock, Unix ms), ARGV[5]
--         our offset from this server's clock and ARGV[6] its error (ms):
--         the id's clock record (acquire.lua) is raised to it
-- ARGV[7] '1' when our wall clock stepped back since the last renewal
--         (counted as clock_step_back)
-- Returns {1, expiry_ms, now_ms} when extended,
--         {0, owner_or_empty, now_ms} when the id is not ours any more
--         (another client owns it, or the pool or the id is gone).
local ids, clients, stats, clock = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local client, id = ARGV[1], ARGV[2]

local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- A pool that vanished (server restarted empty, key deleted) is not recreated
-- here: nothing is written, and the caller learns that the id is gone.
if redis.call('TYPE', ids)['ok'] ~= 'zset' or redis.call('TYPE', clients)['ok'] ~= 'hash' then
  return {0, '', now_ms}
end
local st = redis.call('TYPE', stats)['ok']
local count = st == 'none' or st == 'hash'
local function bump(field) if count then redis.call('HINCRBY', stats, field, 1) end end

bump('extend_ttl_count')
if ARGV[7] == '1' then bump('clock_step_back') end
local owner = redis.call('HGET', clients, id)
local score = redis.call('ZSCORE', ids, id)
if owner ~= client or not score then
  bump('extend_ttl_ownership_error')
  return {0, owner or '', now_ms}
end
if tonumber(score) * 1000 <= now_ms then
  -- Expired, but nobody took it yet: we keep it, and say so in the stats.
  bump('extend_ttl_expire_warning')
end
local expiry_ms = now_ms + tonumber(ARGV[3])
redis.call('ZADD', ids, 'XX', expiry_ms / 1000, id)
local ct = redis.call('TYPE', clock)['ok']
if ct == 'none' or ct == 'hash' then
  local horizon = tonumber(ARGV[4])
  local before = tonumber(string.match(redis.call('HGET', clock, id) or '', '^(%-?%d+) '))
  if before ~= nil and before > horizon then horizon = before end
  redis.call('HSET', clock, id, string.format('%d %d %d %d', horizon, ARGV[5], ARGV[6], now_ms))
end
bump('extend_ttl_success')
return {1, expiry_ms, now_ms}
