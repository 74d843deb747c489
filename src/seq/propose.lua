-- One node's vote in a round of the majority sequence (counter.lua in front).
-- KEYS[1] the counter; ARGV[1] the proposed value (a valid counter).
-- Returns {1, proposed} when the counter was below it and now holds it,
--         {0, current} when the counter is already at or above it,
--         {2}          when this node does not hold the counter (missing, or a
--                      placeholder): no vote, nothing written.
if not is_counter(ARGV[1]) then
  return redis.error_reply('YARAUS_BADARG proposed value ' .. tostring(ARGV[1]) .. ' is not a 64-bit counter')
end
local outcome, value = counter_propose(KEYS[1], ARGV[1])
if outcome == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. value)
end
if outcome == 2 then
  return {2}
end
return {outcome, value}
