-- Take one of `limit` places of a semaphore on its one master (counter.lua
-- and wake.lua are put in front of this script).
-- KEYS[1] the semaphore: a sorted set, member = holder token, score = the
--         server time (ms) at which that holder expires
-- KEYS[2] the fencing counter
-- KEYS[3] (optional) the queue of waiters (wake.lua): joined when refused,
--         left when taken
-- ARGV[1] our token, ARGV[2] ttl in ms, ARGV[3] limit
-- ARGV[4] (optional) our place in the queue, 'ARRIVAL:KEEP:MEMBER', '' for none
-- Returns {1, 1, counter}                       taken; counter = our fencing token
--         {0, '', first_free_ms, counter, holders}  every place is taken
--         {2, type}                             the key holds another type
-- Expired holders are removed first. Time is the server's (TIME), never
-- the client's.
local key, fence = KEYS[1], KEYS[2]
local token, ttl, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

local t = redis.call('TYPE', key)['ok']
if t ~= 'none' and t ~= 'zset' then
  return {2, t}
end
local counter, err = counter_read(fence)
if counter == nil then
  return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. err)
end
counter = counter or '0'
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local mine = redis.call('ZSCORE', key, token)
local holders = redis.call('ZCARD', key)
if not mine and holders >= limit then
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  queue_join(KEYS[3], ARGV[4])
  return {0, '', tonumber(first[2]) - now, counter, holders}
end
local fencing, why = counter_incr(fence)
if not fencing then
  return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. why)
end
counter = fencing
redis.call('ZADD', key, now + ttl, token)
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', key, string.format('%.0f', tonumber(last[2])))
queue_leave(KEYS[3], ARGV[4])
return {1, 1, counter}
