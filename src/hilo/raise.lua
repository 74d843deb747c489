-- The second phase of an agent's run: record the new high-water mark on
-- this shard, before any window below it is created on any shard.
-- KEYS[1] ns:hilo:{NAME}          hash: hwm, fence, size, reserved, created
-- KEYS[2] ns:hilo:{NAME}:open     sorted set: starts of the open windows
-- KEYS[3] ns:hilo:{NAME}:windows  hash: start -> "END NEXT"
-- ARGV[1] this run's fence; ARGV[2] the new high-water mark (20-digit text);
-- ARGV[3] the window size (20-digit text)
-- Returns {1, hwm}: the shard's hwm is now at least ARGV[2]
--         {2, fence or ''}: the shard's fence is not ours (a newer run, or
--           the shard restarted empty since our fence); nothing written
-- (keys.lua, run first: YARAUS_WRONGTYPE when a key holds another type.)
local meta = redis.call('HMGET', KEYS[1], 'fence', 'hwm')
if meta[1] ~= ARGV[1] then
  return {2, meta[1] or ''}
end
local hwm = meta[2]
if not hwm or hwm < ARGV[2] then
  hwm = ARGV[2]
end
redis.call('HSET', KEYS[1], 'hwm', hwm, 'size', ARGV[3])
return {1, hwm}
