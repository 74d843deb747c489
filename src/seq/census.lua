-- Many counters' states at once, read-only: the census's look at one node
-- (census.rs), a chunk of keys per call (counter.lua in front).
-- KEYS the counters, any number
-- ARGV none
-- Returns two items per key, in KEYS order:
--   1, value   the node holds the counter;
--   0, state   it does not: the placeholder, or '' for a missing key;
--  -1, why     the key is not a counter (another type, garbage).
local out = {}
for _, key in ipairs(KEYS) do
  local holds, state = counter_state(key)
  if holds == nil then
    out[#out + 1] = -1
  elseif holds then
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
  out[#out + 1] = state
end
return out
