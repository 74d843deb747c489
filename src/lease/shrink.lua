-- Remove ids from a pool, except those leased right now.
-- KEYS[1] ns:ids, KEYS[2] ns:clients
-- ARGV: encoded ids to remove
-- Returns the ids that were leased and therefore kept.
local ids, clients = KEYS[1], KEYS[2]
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local kept = {}
for i = 1, #ARGV do
  local score = redis.call('ZSCORE', ids, ARGV[i])
  if score and tonumber(score) * 1000 > now_ms then
    kept[#kept + 1] = ARGV[i]
  elseif score then
    redis.call('ZREM', ids, ARGV[i])
    redis.call('HDEL', clients, ARGV[i])
  end
end
return kept
