-- What one shard holds for a sequence. Read-only: the agent's first look
-- (every shard must answer, with keys of the right types, before anything
-- is written anywhere) and `yaraus hilo status`.
-- KEYS[1] ns:hilo:{NAME}          hash: hwm, fence, size, reserved, created
-- KEYS[2] ns:hilo:{NAME}:open     sorted set: starts of the open windows
-- KEYS[3] ns:hilo:{NAME}:windows  hash: start -> "END NEXT"
-- Returns {1, hwm, fence, size, reserved, created, start1, "END NEXT", ...}:
--           fields '' where absent, then each open window, lowest start first
--         {3}: this shard does not know the sequence
-- (keys.lua, run first: YARAUS_WRONGTYPE when a key holds another type.)
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {3}
end
local reply = {1}
for _, v in ipairs(redis.call('HMGET', KEYS[1], 'hwm', 'fence', 'size', 'reserved', 'created')) do
  reply[#reply + 1] = v or ''
end
for _, start in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  reply[#reply + 1] = start
  reply[#reply + 1] = redis.call('HGET', KEYS[3], start) or ''
end
return reply
