-- Remove ids from a pool, for the init whose decision (resize.lua) recorded
-- the range ARGV[1]..ARGV[2], and only while that range is still the one
-- recorded: an init that decided since (another `init` racing this one)
-- stands, and the ids it keeps or put back must stay. Without this check a
-- removal decided for 1..1 would take id 2 from a pool another init had
-- just grown to 1..3, and nothing would bring it back.
-- KEYS[1] ns:ids, KEYS[2] ns:clients, KEYS[3] ns:stats
-- ARGV[1] min, ARGV[2] max of the decision, ARGV[3..] encoded ids to remove
-- Returns how many were in the pool; -1, having removed nothing, when the
-- recorded range is no longer the decision.
-- A leased id is removed too: resize.lua refused the change while one
-- outside the range was leased, unless forced, so this one was either
-- forced or leased since, most likely by a holder still in its --delay.
-- Either learns at its next renewal that the id is gone; nobody else can
-- lease it.
-- Its clock record (ns:clock) stays: it guards the id if the pool grows back.
local ids, clients, stats = KEYS[1], KEYS[2], KEYS[3]
-- Compared as the digits resize.lua stored (a double would round ids past
-- 2^53 together).
local range = redis.call('HMGET', stats, 'min', 'max')
if range[1] ~= ARGV[1] or range[2] ~= ARGV[2] then
  return -1
end
local removed = 0
for i = 3, #ARGV do
  removed = removed + redis.call('ZREM', ids, ARGV[i])
  redis.call('HDEL', clients, ARGV[i])
end
return removed
