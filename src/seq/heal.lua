-- The quarantined repair of a node that lost a sequence counter
-- (counter.lua in front; src/seq/heal.rs has the argument).
-- KEYS[1] the counter
-- ARGV[1] 'mark' or 'repair'
-- mark:   ARGV[2] the state read: '' for a missing key, or an 'unborn:<hex>'
--         mark; ARGV[3] a fresh token (hex). Where the key still holds
--         exactly that state, it becomes 'healing:<ms>:<token>', <ms> this
--         server's clock (TIME) in milliseconds: the quarantine starts.
--         Returns {1, state} marked (or already so), {0, state} it holds
--         something else.
-- ripe:   ARGV[2] the exact 'healing:<ms>:<hex>' read; ARGV[3] the quarantine
--         in milliseconds. Writes nothing.
--         Returns {1, state} the quarantine is over on this server's clock,
--         {2, ms left} it is not, {0, state} it holds something else.
-- repair: ARGV[2] the exact 'healing:<ms>:<hex>' read; ARGV[3] the counter
--         to set (the highest a majority of holders held in a read that
--         began after this node said 'ripe'); ARGV[4] the quarantine in
--         milliseconds.
--         Returns {1, counter} set, {2, ms left} the quarantine is not over
--         on this server's clock, {0, state} it holds something else (lost
--         again, marked again, or repaired by another caller).
local mode, read = ARGV[1], ARGV[2]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local holds, state = counter_state(KEYS[1])
if holds == nil then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. state)
end
if holds then
  return {0, state}
end

if mode == 'mark' then
  local token = ARGV[3]
  if not string.find(token or '', '^%x+$') then
    return redis.error_reply('YARAUS_BADARG token ' .. tostring(token) .. ' is not hexadecimal')
  end
  if read ~= '' and not string.find(read, '^unborn:%x+$') then
    return redis.error_reply('YARAUS_BADARG only a missing key or a mark is quarantined, not ' .. tostring(read))
  end
  if state ~= read then
    return {0, state}
  end
  local marked = 'healing:' .. string.format('%d', now_ms()) .. ':' .. token
  redis.call('SET', KEYS[1], marked)
  return {1, marked}
end

-- The milliseconds of the quarantine of `read` still to run here; nil and
-- an error reply when `read` is not a mark.
local function left_of(read, quarantine)
  local since = string.match(read, '^healing:(%d+):%x+$')
  if since == nil or quarantine == nil then
    return nil, redis.error_reply('YARAUS_BADARG ' .. tostring(read) .. ' is not a quarantine mark')
  end
  return tonumber(since) + quarantine - now_ms()
end

if mode == 'ripe' then
  local left, err = left_of(read, tonumber(ARGV[3]))
  if left == nil then
    return err
  end
  if state ~= read then
    return {0, state}
  end
  if left > 0 then
    return {2, string.format('%d', left)}
  end
  return {1, state}
end

if mode == 'repair' then
  local value = ARGV[3]
  local left, err = left_of(read, tonumber(ARGV[4]))
  if left == nil then
    return err
  end
  if not is_counter(value) then
    return redis.error_reply('YARAUS_BADARG repair of ' .. tostring(read) .. ' to ' .. tostring(value))
  end
  if state ~= read then
    return {0, state}
  end
  if left > 0 then
    return {2, string.format('%d', left)}
  end
  redis.call('SET', KEYS[1], value)
  return {1, value}
end

return redis.error_reply('YARAUS_BADARG mode ' .. tostring(mode))
