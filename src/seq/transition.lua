-- One step of creating a sequence (counter.lua in front): compare-and-set
-- of a node's whole state, as read earlier in the same creation, with this
-- server's clock where the step is timed (src/seq/create.rs).
-- KEYS[1] the counter
-- ARGV[1] from, ARGV[2] to, ARGV[3] milliseconds (the timed steps only).
-- The steps, by the shape of from and to:
--   prepare:  from the exact mark read ('unborn:…'), to 'creating:<id>':
--             leaves 'creating:<ms>:<id>', <ms> this server's clock; done
--             already when the key holds 'creating:<any ms>:<id>';
--   settle:   from 'creating:<id>', to a counter, ARGV[3] the bound: only
--             a 'creating:<ms>:<id>' younger than the bound here;
--   ripe:     from = to = an exact 'creating:<ms>:<id>', ARGV[3] the
--             quarantine: writes nothing, says whether it is over here;
--   rollback: from an exact 'creating:<ms>:<id>', to 'unborn:<hex>:<id>',
--             ARGV[3] the quarantine: only once it is over here;
--   any other: exact compare-and-set of from to to.
-- Returns {1}           when the key held from and now holds to, or already
--                       held to (another creator with the same view got
--                       there first: creators agree on their target);
--         {2, ms left}  ripe and rollback: the quarantine is not over;
--         {0, state}    otherwise (a settle too late for its state
--                       included), with what it holds ('' for missing).
-- Exact comparison is the point: placeholders are unique tokens that a
-- loss wipes, so a step decided before a loss never lands after it.
local from, to, bound = ARGV[1], ARGV[2], tonumber(ARGV[3])
for _, s in ipairs({from, to}) do
  if not is_counter(s) and not is_placeholder(s) then
    return redis.error_reply('YARAUS_BADARG state ' .. tostring(s) .. ' is neither a counter nor a placeholder')
  end
end
local holds, state = counter_state(KEYS[1])
if holds == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. state)
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The creation a prepared state is for, and when it was prepared here.
local function prepared(s)
  local ms, id = string.match(s, '^creating:(%d+):(%x+)$')
  return id, tonumber(ms)
end

local new_id = string.match(to, '^creating:(%x+)$')
if new_id then
  local id = prepared(state)
  if id == new_id then
    return {1}
  end
  if state ~= from then
    return {0, state}
  end
  redis.call('SET', KEYS[1], 'creating:' .. string.format('%d', now_ms()) .. ':' .. new_id)
  return {1}
end

local settling = string.match(from, '^creating:(%x+)$')
if settling and is_counter(to) then
  if state == to then
    return {1}
  end
  local id, since = prepared(state)
  if id ~= settling or bound == nil or now_ms() - since >= bound then
    return {0, state}
  end
  redis.call('SET', KEYS[1], to)
  return {1}
end

local undone = prepared(from)
if undone and (to == from or string.match(to, '^unborn:%x+:(%x+)$') == undone) then
  if state ~= from then
    return {0, state}
  end
  local _, since = prepared(state)
  if bound == nil then
    return redis.error_reply('YARAUS_BADARG no quarantine for ' .. from)
  end
  local left = since + bound - now_ms()
  if left > 0 then
    return {2, string.format('%d', left)}
  end
  if to ~= from then
    redis.call('SET', KEYS[1], to)
  end
  return {1}
end

if state == to then
  return {1}
end
if state == from then
  redis.call('SET', KEYS[1], to)
  return {1}
end
return {0, state}
