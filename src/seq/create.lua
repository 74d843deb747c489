-- Creates a sequence's counter at 0 on one node, if the key is missing
-- (counter.lua in front). Sent only when every node answered a read and
-- none held the key (see src/seq/mod.rs).
-- KEYS[1] the counter.
-- Returns {1, '0'} when created, {0, value} when the key already holds a
-- counter (left alone).
local value, err = counter_read(KEYS[1])
if value == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. err)
end
if value == false then
  redis.call('SET', KEYS[1], '0')
  return {1, '0'}
end
return {0, value}
