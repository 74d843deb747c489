-- Counter helpers of the majority monotonic sequence, put in front of every
-- script that reads or proposes a counter value (a script cannot include
-- another, so the Rust side concatenates this prelude with the script body).
--
-- A counter is a string key holding a 64-bit unsigned integer in decimal:
-- 1 to 20 digits, no sign, no leading zero, at most 18446744073709551615.
-- Lua 5.1 numbers are doubles, exact only up to 2^53, so a counter is never
-- turned into a number here: it is validated and compared as text, digit by
-- digit, which also keeps the comparison independent of the server's locale.
-- Redis's own INCR (the one-master fencing token) works on the same text.

local U64_MAX = '18446744073709551615'

-- a < b, for two valid counters.
local function counter_less(a, b)
  if #a ~= #b then
    return #a < #b
  end
  for i = 1, #a do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return false
end

-- True when s is a valid counter.
local function is_counter(s)
  if type(s) ~= 'string' or #s == 0 or #s > 20 or string.find(s, '%D') then
    return false
  end
  if #s > 1 and string.sub(s, 1, 1) == '0' then
    return false
  end
  return not counter_less(U64_MAX, s)
end

-- A non-holder's state (src/seq/mod.rs has the argument): 'unborn:<hex>',
-- the mark a read leaves where the key was missing ('unborn:<hex>:<id>'
-- when a rollback of the creation <id> left it); 'creating:<ms>:<id>', a
-- node prepared for the creation <id> at <ms> on its own clock
-- ('creating:<id>' from before creations were timed); or
-- 'healing:<ms>:<hex>', a node that lost the counter
-- beside a majority of holders, quarantined since <ms> on its own clock
-- (src/seq/heal.rs). All are unique tokens, so a node that loses its data
-- and is marked again never holds a state that anyone read before the loss.
local function is_placeholder(s)
  return string.find(s, '^unborn:%x+$') ~= nil or string.find(s, '^unborn:%x+:%x+$') ~= nil
    or string.find(s, '^creating:%x+$') ~= nil or string.find(s, '^creating:%d+:%x+$') ~= nil
    or string.find(s, '^healing:%d+:%x+$') ~= nil
end

-- What key holds: (true, counter) on a node that holds the counter;
-- (false, state) on one that does not, state '' when the key is missing or
-- the placeholder; (nil, reason) when it is not a sequence counter at all.
local function counter_state(key)
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then
    return false, ''
  end
  if t ~= 'string' then
    return nil, key .. ' is a ' .. t .. ', not a counter'
  end
  local v = redis.call('GET', key)
  if is_counter(v) then
    return true, v
  end
  if is_placeholder(v) then
    return false, v
  end
  return nil, key .. " holds '" .. string.sub(v, 1, 40) .. "', not a counter (decimal digits)"
end

-- The counter at key: its value; false when this node does not hold it; or
-- nil and the reason it is not a counter.
--
-- A node without the counter is *unknown*, never 0: it may never have had
-- the sequence, or may have lost it (restarted empty, AOF lost, FLUSHALL).
-- A node that lost it may have accepted values before, so it must neither
-- vote nor count towards a read majority.
local function counter_read(key)
  local holds, v = counter_state(key)
  if holds == nil then
    return nil, v
  end
  if not holds then
    return false
  end
  return v
end

-- Set-if-less-than, for a block of values first..last (first = last for
-- one value): stores last when the counter is below first, so that a block
-- never overlaps a value or block accepted before it.
-- Returns (1, last) when stored, (0, current) when the counter is already
-- at or above first, (2, nil) when this node does not hold the counter (it
-- does not vote, and nothing is written), (nil, reason) when the key is not
-- a counter.
local function counter_propose(key, first, last)
  local current, err = counter_read(key)
  if current == nil then
    return nil, err
  end
  if current == false then
    return 2, nil
  end
  if counter_less(current, first) then
    redis.call('SET', key, last)
    return 1, last
  end
  return 0, current
end

-- One more than the counter at key: the fencing token of a lock or a
-- semaphore on one master. A missing counter (a new name, a master
-- restarted empty or failed over to a lagging replica, or a placeholder
-- that a majority sequence left when the lock had several masters) starts
-- from the server's clock in microseconds, as votes with several masters
-- do, so that tokens never start again at 1 below those handed out before.
-- Returns the new value as text, or nil and the reason key is not a counter
-- (nothing written).
local function counter_incr(key)
  local held, err = counter_read(key)
  if held == nil then
    return nil, err
  end
  if not held then
    local now = redis.call('TIME')
    redis.call('SET', key, now[1] .. string.format('%06d', tonumber(now[2])))
  end
  local n = redis.pcall('INCR', key)
  if type(n) == 'table' then
    return nil, 'counter ' .. key .. ': ' .. tostring(n.err)
  end
  -- INCR's integer reply becomes a Lua double, exact below 2^53; above
  -- that the stored text is.
  if n < 9007199254740992 then
    return string.format('%d', n)
  end
  return redis.call('GET', key)
end
