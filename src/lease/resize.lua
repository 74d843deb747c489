-- Decide a change of a pool's range, atomically: refuse, writing nothing,
-- while an id outside the new range is leased (unless forced); otherwise
-- record the new range, after which `init` adds and removes ids in chunks.
-- KEYS[1] ns:ids, KEYS[2] ns:clients, KEYS[3] ns:stats
-- ARGV[1] new min, ARGV[2] new max, ARGV[3] '1' to take leased ids from
--         their holders (who lose them at their next renewal)
-- Returns {1, id, owner, id, owner, ...}: recorded, with the leased ids
--           outside the range (taken, as forced);
--         {0, id, owner, ...}: refused, nothing written.
local ids, clients, stats = KEYS[1], KEYS[2], KEYS[3]
local t = redis.call('TYPE', ids)['ok']
if t ~= 'zset' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. ids .. ' is a ' .. t .. ', not the sorted set of a pool')
end
local min, max = tonumber(ARGV[1]), tonumber(ARGV[2])
local time = redis.call('TIME')
-- Leased: expiry after now, as acquire.lua sees it (the digits of TIME,
-- not a double that would round them).
local now = '(' .. time[1] .. '.' .. string.format('%06d', tonumber(time[2]))
local out = {1}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', ids, now, '+inf')) do
  local n = tonumber(string.sub(m, 2))
  if n == nil or n < min or n > max then
    out[#out + 1] = m
    out[#out + 1] = redis.call('HGET', clients, m) or ''
  end
end
if #out > 1 and ARGV[3] ~= '1' then
  out[1] = 0
  return out
end
redis.call('HSET', stats, 'min', ARGV[1], 'max', ARGV[2])
return out
