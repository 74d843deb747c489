-- One node's state for a sequence (counter.lua in front).
-- KEYS[1] the counter
-- ARGV[1] a mark token (hex) to leave where the key is missing, as
--         'unborn:<token>', so that a creation can later tell this exact
--         state from any state after a loss (src/seq/mod.rs); '' for a
--         read-only look that writes nothing.
-- Returns {1, value} when the node holds the counter,
--         {0, state} when it does not: state is the placeholder, or '' for a
--                    missing key on a read-only look.
local token = ARGV[1]
if token ~= '' and not string.find(token, '^%x+$') then
  return redis.error_reply('YARAUS_BADARG mark ' .. tostring(token) .. ' is not hexadecimal')
end
local holds, state = counter_state(KEYS[1])
if holds == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. state)
end
if holds then
  return {1, state}
end
if state == '' and token ~= '' then
  state = 'unborn:' .. token
  redis.call('SET', KEYS[1], state)
end
return {0, state}
