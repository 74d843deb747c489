-- What one node knows about a lock, for `yaraus lock --info`; writes nothing
-- (counter.lua is put in front of this script).
-- KEYS[1] the lock (or semaphore), KEYS[2] the fencing counter
-- Returns {type, value, pttl, counter, now_ms, member1, expiry1_ms, ...}
--   type     the key's type ('none' when free)
--   value    the holder's token when the key is a string, '' otherwise
--   pttl     the key's remaining time in ms (-2 missing, -1 no expiry)
--   counter  the fencing counter as text, '' when KEYS[2] is not a counter
--   members  for a sorted set (a semaphore): the first 100 holders and the
--            server time (ms) at which each expires
local key, fence = KEYS[1], KEYS[2]
local t = redis.call('TYPE', key)['ok']
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local counter = counter_read(fence) or ''
local value = ''
if t == 'string' then
  value = redis.call('GET', key)
end
local out = {t, value, redis.call('PTTL', key), counter, now}
if t == 'zset' then
  local members = redis.call('ZRANGE', key, 0, 99, 'WITHSCORES')
  for i = 1, #members, 2 do
    out[#out + 1] = members[i]
    out[#out + 1] = string.format('%.0f', tonumber(members[i + 1]))
  end
end
return out
