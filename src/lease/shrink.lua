-- Remove ids from a pool, after resize.lua recorded its new range.
-- KEYS[1] ns:ids, KEYS[2] ns:clients
-- ARGV: encoded ids to remove
-- Returns how many were in the pool.
-- A leased id is removed too: resize.lua refused the change while one
-- outside the range was leased, unless forced, so this one was either
-- forced or leased since, most likely by a holder still in its --delay.
-- Either learns at its next renewal that the id is gone; nobody else can
-- lease it.
-- Its clock record (ns:clock) stays: it guards the id if the pool grows back.
local ids, clients = KEYS[1], KEYS[2]
local removed = 0
for i = 1, #ARGV do
  removed = removed + redis.call('ZREM', ids, ARGV[i])
  redis.call('HDEL', clients, ARGV[i])
end
return removed
