-- One node's counter value (counter.lua in front).
-- KEYS[1] the counter. Returns {1, value} when the key holds a counter,
-- {0} when it is missing (unknown: see counter.lua).
local value, err = counter_read(KEYS[1])
if value == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. err)
end
if value == false then
  return {0}
end
return {1, value}
