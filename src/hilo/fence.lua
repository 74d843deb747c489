-- The first phase of an agent's run: make this shard refuse every older
-- run's raise and create, and learn what the shard holds.
-- KEYS[1] ns:hilo:{NAME}          hash: hwm, fence, size, reserved, created
-- KEYS[2] ns:hilo:{NAME}:open     sorted set: starts of the open windows
-- KEYS[3] ns:hilo:{NAME}:windows  hash: start -> "END NEXT"
-- ARGV[1] this run's fence: its 20-digit token, ':', a random nonce
-- Returns {1, hwm or '', open windows}: the shard's fence is now ARGV[1]
--         {2, fence}: the shard holds the fence of a run with a token at
--           least ours (and another nonce); nothing written
-- (keys.lua, run first: YARAUS_WRONGTYPE when a key holds another type.)
local fence = ARGV[1]
local held = redis.call('HGET', KEYS[1], 'fence')
if held and held ~= fence and held:sub(1, 20) >= fence:sub(1, 20) then
  return {2, held}
end
redis.call('HSET', KEYS[1], 'fence', fence)
local hwm = redis.call('HGET', KEYS[1], 'hwm') or ''
return {1, hwm, redis.call('ZCARD', KEYS[2])}
