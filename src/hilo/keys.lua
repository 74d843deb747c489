-- The prologue of every hilo script: refuse, before anything is written,
-- when one of the sequence's keys holds another type (someone else's key).
-- KEYS[1] ns:hilo:{NAME} hash; KEYS[2] ns:hilo:{NAME}:open sorted set;
-- KEYS[3] ns:hilo:{NAME}:windows hash.
-- Error YARAUS_WRONGTYPE naming the key and both types.
local expected = {'hash', 'zset', 'hash'}
for i, key in ipairs(KEYS) do
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= expected[i] then
    return redis.error_reply('YARAUS_WRONGTYPE ' .. key .. ' holds a ' .. t ..
      ', not a ' .. expected[i] .. ' of yaraus hilo')
  end
end
