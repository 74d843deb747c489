-- One node's vote in a round of the majority sequence (counter.lua in front).
-- KEYS[1] the counter
-- ARGV[1] the first value proposed, ARGV[2] the last (a block of
--         ARGV[2] - ARGV[1] + 1 values; equal for one value), valid
--         counters, first <= last
-- Returns {1, last}    when the counter was below first and now holds last,
--         {0, current} when the counter is already at or above first,
--         {2}          when this node does not hold the counter (missing, or a
--                      placeholder): no vote, nothing written.
local first, last = ARGV[1], ARGV[2]
if not is_counter(first) or not is_counter(last) or counter_less(last, first) then
  return redis.error_reply('YARAUS_BADARG proposed block ' .. tostring(first) .. '..' .. tostring(last) .. ' is not two 64-bit counters in order')
end
local outcome, value = counter_propose(KEYS[1], first, last)
if outcome == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. value)
end
if outcome == 2 then
  return {2}
end
return {outcome, value}
