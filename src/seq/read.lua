-- One node's counter value (counter.lua in front).
-- KEYS[1] the counter. Returns the value as text, '0' when the key is missing.
local value, err = counter_read(KEYS[1])
if not value then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. err)
end
return value
