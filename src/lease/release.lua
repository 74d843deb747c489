-- Give an id back: it becomes free now, so it is leased again only after
-- every id that has been free longer.
-- KEYS[1] ns:ids, KEYS[2] ns:clients, KEYS[3] (optional) ns:clock,
-- KEYS[4] (optional, with KEYS[3]) the queue of runs waiting for an id
-- ARGV[1] our client id, ARGV[2] encoded id
-- ARGV[3] (optional) '1': only if its lease still runs (a failed attempt's
--         id released again: one that is free already keeps its place)
-- ARGV[4] (optional, with KEYS[3]) what becomes of the id's clock record
--         (src/lease/clock_guard.rs):
--         'ended': our command's whole tree is gone; its horizon becomes
--           ARGV[5] (Unix ms: our wall clock then, never below what the
--           lease found), which may lower what the lease and renewals
--           projected;
--         'unused': our command never ran; the record is put back as the
--           lease found it, ARGV[5] ('' for none)
--         '' (or none): the record is left as it is
-- ARGV[6] (optional) the pool's wake channel ('' for none), ARGV[7]
--         'spublish' on a Redis Cluster (sharded: the channel carries the
--         pool's hash tag), else 'publish': a released id wakes the first
--         run of the queue waiting for one, or all of them
--         (src/claim/wake.rs), in this script, so that no waiter can find
--         the pool full after the message; ARGV[8] (optional) the
--         releaser's own place in the queue, which it must not wake ('' or
--         none: a run releasing its own leftover while it waits)
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
local clock, id = KEYS[3], ARGV[2]
if clock and redis.call('TYPE', clock)['ok'] == 'hash' then
  if ARGV[4] == 'ended' then
    local rest = string.match(redis.call('HGET', clock, id) or '', '^%-?%d+ (.*)$')
    if rest then
      redis.call('HSET', clock, id, string.format('%d %s', tonumber(ARGV[5]), rest))
    end
  elseif ARGV[4] == 'unused' then
    if ARGV[5] == '' then
      redis.call('HDEL', clock, id)
    else
      redis.call('HSET', clock, id, ARGV[5])
    end
  end
end
-- wake: the prelude src/claim/wake.lua.
wake(ARGV[6], ARGV[7], KEYS[4], ARGV[8])
return 1
