-- Compare-and-delete: free the lock on one node only if it holds our token,
-- byte for byte. Another holder's key, or a key of another type, is never
-- touched (GET of another type is an error, which pcall turns into a table
-- that equals no token).
-- KEYS[1] the lock; ARGV[1] our token
-- Returns 1 when deleted, 0 when it was not ours.
if redis.pcall('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
