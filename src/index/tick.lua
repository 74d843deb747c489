-- One replica's tick of interval n: count it in (the seed's INCR), learn
-- its pair for n (its rank in n-1 and how many took part in n-1), and
-- confirm the transition of n when it runs nothing but that pair.
-- KEYS[1] ns:index:{NAME}                hash: interval (ms), last (highest n ticked)
-- KEYS[2] ns:index:{NAME}:<n>            string: INCR counter of n
-- KEYS[3] ns:index:{NAME}:<n>:who        hash: client -> its rank in n
-- KEYS[4] ns:index:{NAME}:<n-1>          counter of n-1
-- KEYS[5] ns:index:{NAME}:<n-1>:who      who of n-1
-- KEYS[6] ns:index:{NAME}:transition:<n> set: clients of n-1 settled for n
-- ARGV[1] n; ARGV[2] interval (ms); ARGV[3] client id;
-- ARGV[4] the pair the client's command runs with, "index/replicas", or ""
--         when it runs none; ARGV[5] how long the keys are kept (ms)
-- Returns {1, rank in n, rank in n-1 (0: none), count of n-1 (0: none),
--          confirmations of n, 1 if this client is settled for n else 0}
--         {2, last}: an interval after n has begun (n is sealed); nothing written
--         {3, interval ms, last}: NAME is in use with another interval; nothing written
-- Error YARAUS_WRONGTYPE when a key holds another type; nothing written.
local expected = {'hash', 'string', 'hash', 'string', 'hash', 'set'}
for i, key in ipairs(KEYS) do
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= expected[i] then
    return redis.error_reply('YARAUS_WRONGTYPE ' .. key .. ' holds a ' .. t ..
      ', not a ' .. expected[i] .. ' of yaraus index')
  end
end
local n, interval, client, holding, keep = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local config = redis.call('HMGET', KEYS[1], 'interval', 'last')
local last = tonumber(config[2] or '0')
if config[1] and config[1] ~= interval then
  return {3, config[1], tostring(last)}
end
if last > n then
  return {2, tostring(last)}
end

local rank = redis.call('HGET', KEYS[3], client)
if not rank then
  rank = redis.call('INCR', KEYS[2])
  redis.call('HSET', KEYS[3], client, rank)
end
redis.call('PEXPIRE', KEYS[2], keep)
redis.call('PEXPIRE', KEYS[3], keep)
redis.call('HSET', KEYS[1], 'interval', interval, 'last', tostring(math.max(last, n)))
redis.call('PEXPIRE', KEYS[1], keep)

local previous = tonumber(redis.call('HGET', KEYS[5], client) or '0')
local count = tonumber(redis.call('GET', KEYS[4]) or '0')
local settled = 0
if previous > 0 and (holding == '' or holding == (previous - 1) .. '/' .. count) then
  redis.call('SADD', KEYS[6], client)
  redis.call('PEXPIRE', KEYS[6], keep)
  settled = 1
end
return {1, tonumber(rank), previous, count, redis.call('SCARD', KEYS[6]), settled}
