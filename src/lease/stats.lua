-- A consistent picture of a pool at one server instant. Read-only.
-- KEYS[1] ns:ids, KEYS[2] ns:stats, KEYS[3] ns:clients (only checked: a pool
-- whose owners hash is of the wrong type is not a pool), KEYS[4] ns:clock
-- ARGV[1] (optional) 'ttls': also every using id's ttl, for the median over
--         the shards of a sharded pool (src/lease/layout.rs)
-- Returns {now_ms, {stats hash flat}, free, using, ttl_min, ttl_mid, ttl_max,
--          {id, clock record, ...}} with the ttls as strings (seconds), for
-- the using ids only, and the clock records (src/lease/clock_guard.rs) of the
-- using ids that have one; with 'ttls', then {ttl, ...} of every using id,
-- shortest first.
local ids, stats, clients, clock = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local t = redis.call('TYPE', ids)['ok']
if t == 'none' then
  return redis.error_reply('YARAUS_UNINIT the pool ' .. ids .. ' does not exist; create it with `yaraus init`')
elseif t ~= 'zset' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. ids .. ' is a ' .. t .. ', not the sorted set of a pool')
end
local st = redis.call('TYPE', stats)['ok']
if st ~= 'none' and st ~= 'hash' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. stats .. ' is a ' .. st .. ', not a hash')
end
local ct = redis.call('TYPE', clients)['ok']
if ct ~= 'none' and ct ~= 'hash' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. clients .. ' is a ' .. ct .. ', not a hash')
end
local clt = redis.call('TYPE', clock)['ok']
if clt ~= 'none' and clt ~= 'hash' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. clock .. ' is a ' .. clt .. ', not a hash')
end
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local now = now_ms / 1000
local counters = {}
if st == 'hash' then counters = redis.call('HGETALL', stats) end
local total = redis.call('ZCARD', ids)
local using = redis.call('ZCOUNT', ids, '(' .. now, '+inf')
local free = total - using
local function ttl_at(rank)
  local r = redis.call('ZRANGE', ids, rank, rank, 'WITHSCORES')
  return tonumber(r[2]) - now
end
local min, mid, max = 0, 0, 0
if using > 0 then
  min = ttl_at(free)
  max = ttl_at(total - 1)
  local half = math.floor((using - 1) / 2)
  if using % 2 == 1 then
    mid = ttl_at(free + half)
  else
    mid = (ttl_at(free + half) + ttl_at(free + half + 1)) / 2
  end
end
local clocks = {}
if clt == 'hash' and using > 0 then
  for _, id in ipairs(redis.call('ZRANGE', ids, free, total - 1)) do
    local record = redis.call('HGET', clock, id)
    if record then
      clocks[#clocks + 1] = id
      clocks[#clocks + 1] = record
    end
  end
end
local reply = {now_ms, counters, free, using, string.format('%.3f', min), string.format('%.3f', mid), string.format('%.3f', max), clocks}
if ARGV[1] == 'ttls' then
  local ttls = {}
  if using > 0 then
    local leased = redis.call('ZRANGE', ids, free, total - 1, 'WITHSCORES')
    for i = 2, #leased, 2 do
      ttls[#ttls + 1] = string.format('%.3f', tonumber(leased[i]) - now)
    end
  end
  reply[#reply + 1] = ttls
end
return reply
