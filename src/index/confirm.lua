-- A replica's command is gone: confirm the transition of interval n for it
-- (it runs nothing, so nothing that disagrees with its pair for n).
-- KEYS[1] ns:index:{NAME}:<n-1>:who; KEYS[2] ns:index:{NAME}:transition:<n>
-- ARGV[1] client id; ARGV[2] how long the keys are kept (ms)
-- Returns the confirmations of n, or -1 when the client did not take part
-- in n-1 (its confirmation counts for nothing; nothing written).
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' or not redis.call('HGET', KEYS[1], ARGV[1]) then
  return -1
end
local t = redis.call('TYPE', KEYS[2])['ok']
if t ~= 'none' and t ~= 'set' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. KEYS[2] .. ' holds a ' .. t ..
    ', not a set of yaraus index')
end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return redis.call('SCARD', KEYS[2])
