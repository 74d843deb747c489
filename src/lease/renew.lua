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
--
-- Every holder runs this once an interval, and each command a script calls
-- costs the server a quarter to a half of what starting the script does
-- (docs/benchmarks.md prices each line): a renewal that is ours runs eight (TIME, the owner, the score, the record, its write, the
-- score's write, two counters) and nothing else. The keys' types are not
-- checked up front: each key is first read through redis.pcall, which answers
-- a key of the wrong type with an error table instead of aborting the script,
-- so a stats or clock key of another type is left alone (the renewal goes on
-- without counting or without its record), and an owner or a score that is
-- not ours, whatever the reason, leads to the checks of the ids and owners.
local ids, clients, stats, clock = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local client, id = ARGV[1], ARGV[2]

local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- The increment is the string '1': a Lua number given to redis.pcall is
-- first printed with '%.14g' (printf's floating-point path), a quarter of
-- what the whole HINCRBY call costs.
local counting = true
local function count(field)
  if counting then
    counting = type(redis.pcall('HINCRBY', stats, field, '1')) == 'number'
  end
end

local owner = redis.pcall('HGET', clients, id)
local score = redis.pcall('ZSCORE', ids, id)
local ours = owner == client and type(score) == 'string'
-- A pool that vanished (server restarted empty, key deleted) or whose keys
-- hold something else is not recreated here: nothing is written, and the
-- caller learns that the id is gone.
if not ours and (redis.call('TYPE', ids)['ok'] ~= 'zset' or redis.call('TYPE', clients)['ok'] ~= 'hash') then
  return {0, '', now_ms}
end
count('extend_ttl_count')
if ARGV[7] == '1' then count('clock_step_back') end
if not ours then
  count('extend_ttl_ownership_error')
  return {0, owner or '', now_ms}
end
if tonumber(score) * 1000 <= now_ms then
  -- Expired, but nobody took it yet: we keep it, and say so in the stats.
  count('extend_ttl_expire_warning')
end
local expiry_ms = now_ms + tonumber(ARGV[3])
redis.call('ZADD', ids, 'XX', expiry_ms / 1000, id)
local record = redis.pcall('HGET', clock, id)
if type(record) ~= 'table' then
  local horizon = tonumber(ARGV[4])
  local before = tonumber(string.match(record or '', '^(%-?%d+) '))
  if before ~= nil and before > horizon then horizon = before end
  redis.call('HSET', clock, id, string.format('%d %d %d %d', horizon, ARGV[5], ARGV[6], now_ms))
end
count('extend_ttl_success')
return {1, expiry_ms, now_ms}
