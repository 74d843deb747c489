-- Give an id back: it becomes free now, so it is leased again only after
-- every id that has been free longer.
-- KEYS[1] ns:ids, KEYS[2] ns:clients, KEYS[3] (optional) ns:clock
-- ARGV[1] our client id, ARGV[2] encoded id
-- ARGV[3] (optional) '1': only if its lease still runs (a failed attempt's
--         id released again: one that is free already keeps its place)
-- ARGV[4] (optional, with KEYS[3]) the id's horizon now (Unix ms, our wall
--         clock once our command's whole tree is gone, and never below what
--         the lease found): the clock record's horizon becomes it, which
--         may lower what our lease and renewals projected
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
if KEYS[3] and ARGV[4] and redis.call('TYPE', KEYS[3])['ok'] == 'hash' then
  local record = redis.call('HGET', KEYS[3], ARGV[2])
  local rest = record and string.match(record, '^%-?%d+ (.*)$')
  if rest then
    redis.call('HSET', KEYS[3], ARGV[2], string.format('%d %s', ARGV[4], rest))
  end
end
return 1
