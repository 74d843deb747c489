-- Take the lock on one node if it is free, and count a fencing token in the
-- same step (counter.lua is put in front of this script).
-- KEYS[1] the lock: a string holding the holder's token, with a PX expiry
--         (the key and value of redis-py's Lock, redsync and node-redlock)
-- KEYS[2] the fencing counter (a string of decimal digits, never expires)
-- ARGV[1] our token
-- ARGV[2] ttl, milliseconds
-- ARGV[3] fencing: 'incr'    one master: the counter + 1 is our fencing token
--                  'propose' several masters: our vote in the majority
--                            sequence, set-if-less-than ARGV[4]
--                  'read'    several masters, nothing to propose yet: only
--                            report the counter
-- ARGV[4] the proposed fencing token, for 'propose'
-- Returns {1, voted, counter}          taken (or already ours); voted = 1 when
--                                      the increment or the proposal stands;
--                                      counter = the counter afterwards
--         {0, holder, pttl, counter}   held by another value (pttl -1: the
--                                      key has no expiry)
--         {2, type}                    the key holds another type
-- Nothing at all is written unless the lock is taken on this node: a fencing
-- vote counts only where we hold the lock (the argument is in src/lock/mod.rs).
local key, fence = KEYS[1], KEYS[2]
local token, ttl, mode = ARGV[1], ARGV[2], ARGV[3]

local t = redis.call('TYPE', key)['ok']
if t ~= 'none' and t ~= 'string' then
  return {2, t}
end
local counter, err = counter_read(fence)
if not counter then
  return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. err)
end
if t == 'string' then
  local holder = redis.call('GET', key)
  if holder ~= token then
    return {0, holder, redis.call('PTTL', key), counter}
  end
end

local voted = 0
if mode == 'incr' then
  local r = redis.pcall('INCR', fence)
  if type(r) == 'table' and r.err then
    return redis.error_reply('YARAUS_WRONGTYPE fencing counter ' .. fence .. ': ' .. r.err)
  end
  -- INCR's integer reply becomes a Lua double; the stored text is exact.
  counter = redis.call('GET', fence)
  voted = 1
elseif mode == 'propose' then
  if not is_counter(ARGV[4]) then
    return redis.error_reply('YARAUS_BADARG proposed fencing token ' .. tostring(ARGV[4]) .. ' is not a 64-bit counter')
  end
  local accepted, value = counter_propose(fence, ARGV[4])
  counter = value
  if accepted then
    voted = 1
  end
end
redis.call('SET', key, token, 'PX', ttl)
return {1, voted, counter}
