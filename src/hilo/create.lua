-- The third phase of an agent's run: open one window on this shard.
-- KEYS[1] ns:hilo:{NAME}          hash: hwm, fence, size, reserved, created
-- KEYS[2] ns:hilo:{NAME}:open     sorted set: starts of the open windows
-- KEYS[3] ns:hilo:{NAME}:windows  hash: start -> "END NEXT"
-- ARGV[1] this run's fence; ARGV[2] start; ARGV[3] end (20-digit texts)
-- Returns {1}: the window [start, end) is open here
--         {2, fence or ''}: the shard's fence is not ours; nothing written
--         {3, hwm or ''}: end is above this shard's high-water mark (it
--           restarted, or our raise did not reach it); nothing written
-- (keys.lua, run first: YARAUS_WRONGTYPE when a key holds another type.)
local meta = redis.call('HMGET', KEYS[1], 'fence', 'hwm')
if meta[1] ~= ARGV[1] then
  return {2, meta[1] or ''}
end
if not meta[2] or meta[2] < ARGV[3] then
  return {3, meta[2] or ''}
end
if redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[3] .. ' ' .. ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[2], 0, ARGV[2])
  redis.call('HINCRBY', KEYS[1], 'created', 1)
end
return {1}
