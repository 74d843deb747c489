-- Raises one node's counter to at least a value (counter.lua in front): the
-- operator's way out after a disaster, `yaraus seq set-floor`. Never lowers.
-- KEYS[1] the counter; ARGV[1] the floor (a valid counter).
-- Returns {1, floor} when the node did not hold the counter (missing, or a
-- placeholder) or held less, and now holds the floor; {0, current} when it
-- was already at or above it.
if not is_counter(ARGV[1]) then
  return redis.error_reply('YARAUS_BADARG floor ' .. tostring(ARGV[1]) .. ' is not a 64-bit counter')
end
local current, err = counter_read(KEYS[1])
if current == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. err)
end
if current == false or counter_less(current, ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
  return {1, ARGV[1]}
end
return {0, current}
