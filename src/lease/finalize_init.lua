-- Publish a pool built under a temporary key, in one step, so that `run`
-- never sees a half-built pool.
-- KEYS[1] ns:ids, KEYS[2] the temporary key, KEYS[3] ns:stats
-- ARGV[1] expected number of ids, ARGV[2] min, ARGV[3] max
-- Returns 1 when published, 0 when another init published a pool first.
local ids, tmp, stats = KEYS[1], KEYS[2], KEYS[3]
if redis.call('EXISTS', ids) == 1 then
  redis.call('UNLINK', tmp)
  return 0
end
if redis.call('ZCARD', tmp) ~= tonumber(ARGV[1]) then
  redis.call('UNLINK', tmp)
  return redis.error_reply('YARAUS_INCOMPLETE the pool under construction lost ids (did it expire?); run init again')
end
redis.call('RENAME', tmp, ids)
redis.call('PERSIST', ids)
redis.call('HSET', stats, 'min', ARGV[2], 'max', ARGV[3])
return 1
