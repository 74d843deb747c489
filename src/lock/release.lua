-- Compare-and-delete: free the lock on one node only if it holds our token,
-- byte for byte. Another holder's key, or a key of another type, is never
-- touched (GET of another type is an error, which pcall turns into a table
-- that equals no token). When it frees the lock, it wakes the waiters
-- (src/claim/wake.rs): a message on the lock's wake channel, in the same
-- script, so that no waiter can see the lock busy after the message.
-- KEYS[1] the lock; KEYS[2] its fencing counter (a lock, not a semaphore);
-- KEYS[3] (optional) the queue of waiters, of which it wakes the first
-- ARGV[1] our token; ARGV[2] the wake channel ('' for none); ARGV[3]
--         'spublish' on a Redis Cluster (sharded: the channel carries the
--         key's hash tag), else 'publish'; ARGV[4] (optional) our own place
--         in the queue, so that we do not wake ourselves ('' for none)
-- Returns {freed, lacks}: freed 1 when deleted, 0 when it was not ours;
--         lacks 1 when the fencing counter is not a counter here (a master
--         restarted empty: with several masters, the fencing sequence then
--         heals it, src/seq/heal.rs), else 0. Nothing else is written.
local freed = 0
if redis.pcall('GET', KEYS[1]) == ARGV[1] then
  freed = redis.call('DEL', KEYS[1])
  wake(ARGV[2], ARGV[3], KEYS[3], ARGV[4])
end
local counter = redis.pcall('GET', KEYS[2])
local lacks = 0
if type(counter) ~= 'string' or not string.find(counter, '^%d+$') then
  lacks = 1
end
return {freed, lacks}
