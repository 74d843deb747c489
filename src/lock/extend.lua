-- Extend our hold on one node.
-- KEYS[1] the lock
-- ARGV[1] our token, ARGV[2] ttl in milliseconds
-- ARGV[3] '1': where the key is missing (the node restarted empty, or the key
--         expired), set our token again so that the majority heals; the
--         caller counts such a node as lost for this round all the same
-- Returns {1}          ours: the expiry is now ttl from now
--         {2}          was missing, our token is set again
--         {3}          missing
--         {0, holder}  another value: someone else holds it here
--         {4, type}    the key holds another type
local key, token = KEYS[1], ARGV[1]
local t = redis.call('TYPE', key)['ok']
if t == 'none' then
  if ARGV[3] == '1' then
    redis.call('SET', key, token, 'PX', ARGV[2])
    return {2}
  end
  return {3}
end
if t ~= 'string' then
  return {4, t}
end
local holder = redis.call('GET', key)
if holder ~= token then
  return {0, holder}
end
redis.call('PEXPIRE', key, ARGV[2])
return {1}
