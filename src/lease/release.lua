-- Give an id back: it becomes free now, so it is leased again only after
-- every id that has been free longer.
-- KEYS[1] ns:ids, KEYS[2] ns:clients
-- ARGV[1] our client id, ARGV[2] encoded id
-- ARGV[3] (optional) '1': only if its lease still runs (a failed attempt's
--         id released again: one that is free already keeps its place)
-- Returns 1 when released, 0 when it was not ours (left alone).
local ids, clients = KEYS[1], KEYS[2]
if redis.call('TYPE', ids)['ok'] ~= 'zset' or redis.call('TYPE', clients)['ok'] ~= 'hash' then
  return 0
end
if redis.call('HGET', clients, ARGV[2]) ~= ARGV[1] or not redis.call('ZSCORE', ids, ARGV[2]) then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
if ARGV[3] == '1' and tonumber(redis.call('ZSCORE', ids, ARGV[2])) <= now then
  return 0
end
redis.call('ZADD', ids, 'XX', now, ARGV[2])
return 1
