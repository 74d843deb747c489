-- Lease the id that has been free the longest (smallest id on ties).
-- KEYS[1] ns:ids (zset: encoded id -> expiry, Unix seconds)
-- KEYS[2] ns:clients (hash: encoded id -> owner client id)
-- KEYS[3] ns:stats (hash: counters)
-- ARGV[1] our client id, or '' to be given a new one
-- ARGV[2] hostname, for a new client id
-- ARGV[3] lease length in milliseconds
-- Returns {1, client, id, expiry_ms, now_ms} on success,
--         {0, client, '', earliest_expiry_ms, now_ms} when every id is leased.
-- Time comes from the server (TIME), never from the client. The replica count
-- is not asked here (INFO): a restricted ACL user may not run it, and the
-- caller learns it once per connection.
local ids, clients, stats = KEYS[1], KEYS[2], KEYS[3]

local function kind(key) return redis.call('TYPE', key)['ok'] end
local t = kind(ids)
if t == 'none' then
  return redis.error_reply('YARAUS_UNINIT the pool ' .. ids .. ' does not exist; create it with `yaraus init`')
elseif t ~= 'zset' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. ids .. ' is a ' .. t .. ', not the sorted set of a pool')
end
t = kind(clients)
if t ~= 'none' and t ~= 'hash' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. clients .. ' is a ' .. t .. ', not a hash')
end
t = kind(stats)
if t ~= 'none' and t ~= 'hash' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. stats .. ' is a ' .. t .. ', not a hash')
end

local time = redis.call('TIME')
local secs, micros = tonumber(time[1]), tonumber(time[2])
local now_ms = secs * 1000 + math.floor(micros / 1000)

local client = ARGV[1]
if client == '' then
  local n = redis.call('HINCRBY', stats, 'client_id_count', 1)
  client = string.format('%s-%d.%03d-%d', ARGV[2], secs, math.floor(micros / 1000), n)
end
redis.call('HINCRBY', stats, 'get_id_count', 1)

local head = redis.call('ZRANGE', ids, 0, 0, 'WITHSCORES')
local score = tonumber(head[2])
if score * 1000 > now_ms then
  redis.call('HINCRBY', stats, 'get_id_no_available_id', 1)
  return {0, client, '', math.floor(score * 1000), now_ms}
end

local expiry_ms = now_ms + tonumber(ARGV[3])
redis.call('ZADD', ids, expiry_ms / 1000, head[1])
redis.call('HSET', clients, head[1], client)
redis.call('HINCRBY', stats, 'get_id_success', 1)
return {1, client, head[1], expiry_ms, now_ms}
