-- One step of creating a sequence (counter.lua in front): compare-and-set
-- of a node's whole state, as read earlier in the same creation.
-- KEYS[1] the counter
-- ARGV[1] from: the state read (a counter, or a placeholder; never missing)
-- ARGV[2] to: the state to leave (equal to from for a pure check)
-- Returns {1}        when the key held from, and now holds to, or already
--                    held to (another creator with the same view got there
--                    first: creators agree on their target);
--         {0, state} otherwise, with what it holds ('' for missing).
-- Exact comparison is the point: placeholders are unique tokens that a
-- loss wipes, so a step decided before a loss never lands after it.
local from, to = ARGV[1], ARGV[2]
for _, s in ipairs({from, to}) do
  if not is_counter(s) and not is_placeholder(s) then
    return redis.error_reply('YARAUS_BADARG state ' .. tostring(s) .. ' is neither a counter nor a placeholder')
  end
end
local holds, state = counter_state(KEYS[1])
if holds == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. state)
end
if state == to then
  return {1}
end
if state == from then
  redis.call('SET', KEYS[1], to)
  return {1}
end
return {0, state}
