-- Take a shared place in a lock on its one master (`yaraus lock -s`;
-- counter.lua and shared.lua are put in front of this script).
-- KEYS[1] the lock: absent, a sorted set of shared holders (see shared.lua),
--         or a string (an exclusive holder's token)
-- KEYS[2] the fencing counter
-- ARGV[1] our token, ARGV[2] ttl in ms
-- Returns {1, 1, counter}                   taken; counter = our fencing token
--         {0, holder, pttl, counter}        an exclusive holder has it
--         {0, waiting, pttl, counter, n}    a writer is waiting (waiting is
--                                           its 'writer-waiting:' member,
--                                           pttl its expiry), n holders
--         {2, type}                         the key holds another type
-- Time is the server's (TIME), never the client's.
local key, fence = KEYS[1], KEYS[2]
local token, ttl = ARGV[1], tonumber(ARGV[2])

local t = redis.call('TYPE', key)['ok']
if t ~= 'none' and t ~= 'zset' and t ~= 'string' then
  return {2, t}
end
local counter, err = counter_read(fence)
if counter == nil then
  return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. err)
end
counter = counter or '0'
if t == 'string' then
  return {0, redis.call('GET', key), redis.call('PTTL', key), counter}
end
local now = server_ms()
if t == 'zset' then
  local holders, _, writer, writer_expiry = shared_state(key, now)
  if writer then
    return {0, writer, writer_expiry - now, counter, holders}
  end
end
local fencing, why = counter_incr(fence)
if not fencing then
  return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. why)
end
redis.call('ZADD', key, now + ttl, token)
shared_expire(key)
return {1, 1, fencing}
