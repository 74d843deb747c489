-- Helpers of the shared (readers-writer) lock, put in front of the scripts
-- that take a lock on one master (`yaraus lock -s`, and the exclusive lock,
-- which must see shared holders).
--
-- While shared holders hold it, the lock's key is a sorted set: member =
-- a holder's token, score = the server time (ms) at which that holder
-- expires (the layout of a semaphore). A writer (an exclusive holder) that
-- finds shared holders and will wait adds itself as the member
-- 'writer-waiting:<its token>', scored by a short expiry that each of its
-- attempts renews: no new shared holder is admitted while one is live, so
-- a stream of overlapping readers cannot starve a writer. The key as a
-- string is the exclusive holder's token, as for any lock.

local WAITING = 'writer-waiting:'

-- The server's time, ms.
local function server_ms()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- Drops the expired entries of the sorted set at key; returns how many
-- shared holders are live, the first of them to expire (its expiry, ms),
-- and the waiting writer that expires first (member, expiry) if any.
local function shared_state(key, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local entries = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  local holders, first, writer, writer_expiry = 0, nil, nil, nil
  for i = 1, #entries, 2 do
    local member, expiry = entries[i], tonumber(entries[i + 1])
    if string.sub(member, 1, #WAITING) == WAITING then
      if not writer then
        writer, writer_expiry = member, expiry
      end
    else
      holders = holders + 1
      if not first then
        first = expiry
      end
    end
  end
  return holders, first, writer, writer_expiry
end

-- The key lives as long as its longest entry.
local function shared_expire(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if #last > 0 then
    redis.call('PEXPIREAT', key, string.format('%.0f', tonumber(last[2])))
  end
end
