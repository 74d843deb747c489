-- Reserve one block of ids: advance the cursor of the open window with the
-- lowest start by the batch, never beyond the window's end.
-- KEYS[1] ns:hilo:{NAME}          hash: hwm, fence, size, reserved, created
-- KEYS[2] ns:hilo:{NAME}:open     sorted set, every score 0, member = start of an
--                                 open window (so the lexical order is numeric)
-- KEYS[3] ns:hilo:{NAME}:windows  hash: start -> "END NEXT" of each open window
-- Every bound is 20-digit zero-padded decimal text: ids are 64-bit, Lua's
-- numbers are exact only to 2^53, and padded text compares as the numbers do.
-- ARGV[1] the batch, 20-digit text, at least 1
-- Returns {1, first, next, size}: the ids [first, next) are the caller's;
--           next - first is the batch, or less at the end of a window
--         {2, size}: no open window on this shard; nothing written
--         {3}: this shard does not know the sequence; nothing written
--         {4, size}: the batch is larger than the window size; nothing written
-- (keys.lua, run first: YARAUS_WRONGTYPE when a key holds another type.)
local ZERO = '00000000000000000000'

-- a + b for 20-digit texts: 21 digits, the first the carry.
local function add(a, b)
  local out, carry = {}, 0
  for i = 20, 1, -1 do
    local d = a:byte(i) + b:byte(i) - 96 + carry
    if d >= 10 then d, carry = d - 10, 1 else carry = 0 end
    out[i + 1] = string.char(48 + d)
  end
  out[1] = string.char(48 + carry)
  return table.concat(out)
end

-- a - b for 20-digit texts with a >= b: 20 digits.
local function sub(a, b)
  local out, borrow = {}, 0
  for i = 20, 1, -1 do
    local d = a:byte(i) - b:byte(i) - borrow
    if d < 0 then d, borrow = d + 10, 1 else borrow = 0 end
    out[i] = string.char(48 + d)
  end
  return table.concat(out)
end

local meta = redis.call('HMGET', KEYS[1], 'size', 'reserved')
local size = meta[1]
if not size then
  return {3}
end
local batch = ARGV[1]
if batch > size then
  return {4, size}
end
while true do
  local open = redis.call('ZRANGE', KEYS[2], 0, 0)
  local start = open[1]
  if not start then
    return {2, size}
  end
  local window = redis.call('HGET', KEYS[3], start)
  local stop, first = nil, nil
  if window then
    stop, first = window:sub(1, 20), window:sub(22, 41)
  end
  if stop and first < stop then
    local sum = add(first, batch)
    local next = stop
    if sum:sub(1, 1) == '0' and sum:sub(2) < stop then
      next = sum:sub(2)
    end
    if next == stop then
      redis.call('ZREM', KEYS[2], start)
      redis.call('HDEL', KEYS[3], start)
    else
      redis.call('HSET', KEYS[3], start, stop .. ' ' .. next)
    end
    local reserved = add(meta[2] or ZERO, sub(next, first)):sub(2)
    redis.call('HSET', KEYS[1], 'reserved', reserved)
    return {1, first, next, size}
  end
  -- A member without a window, or a full one: not open; tidy it away.
  redis.call('ZREM', KEYS[2], start)
  redis.call('HDEL', KEYS[3], start)
end
