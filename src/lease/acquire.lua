-- Lease the id that has been free the longest (smallest id on ties).
-- (src/claim/wake.lua is put in front of this script.)
-- KEYS[1] ns:ids (zset: encoded id -> expiry, Unix seconds)
-- KEYS[2] ns:clients (hash: encoded id -> owner client id)
-- KEYS[3] ns:stats (hash: counters)
-- KEYS[4] ns:clock (hash: encoded id -> '<horizon> <offset> <error> <at>',
--         milliseconds: the clock guard's record, src/lease/clock_guard.rs)
-- KEYS[5] (optional) the queue of runs waiting for an id (wake.lua): joined
--         when every id is leased, left when one is leased
-- ARGV[1] our client id, or '' to be given a new one
-- ARGV[2] hostname, for a new client id
-- ARGV[3] lease length in milliseconds
-- ARGV[4] our horizon: the lease's deadline on our wall clock (Unix ms)
-- ARGV[5] our offset from this server's clock, ARGV[6] its error (ms)
-- ARGV[7] (optional) our place in the queue, 'ARRIVAL:KEEP:MEMBER', '' for none
-- Returns {1, client, id, expiry_ms, now_ms, record} on success, record
--           being the id's clock record before this lease ('' if none);
--           the record's horizon becomes the greater of the two;
--         {0, client, '', earliest_expiry_ms, now_ms, ''} when every id is leased.
-- Time comes from the server (TIME), never from the client. The replica count
-- is not asked here (INFO): a restricted ACL user may not run it, and the
-- caller learns it once per connection.
local ids, clients, stats, clock = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

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
for _, key in ipairs({stats, clock}) do
  t = kind(key)
  if t ~= 'none' and t ~= 'hash' then
    return redis.error_reply('YARAUS_WRONGTYPE ' .. key .. ' is a ' .. t .. ', not a hash')
  end
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
-- Compared to the microsecond, as release.lua scores a freed id: a waiter
-- woken by a release in the same millisecond must find the id free.
if score > secs + micros / 1000000 then
  redis.call('HINCRBY', stats, 'get_id_no_available_id', 1)
  queue_join(KEYS[5], ARGV[7])
  return {0, client, '', math.floor(score * 1000), now_ms, ''}
end

local expiry_ms = now_ms + tonumber(ARGV[3])
redis.call('ZADD', ids, expiry_ms / 1000, head[1])
redis.call('HSET', clients, head[1], client)
redis.call('HINCRBY', stats, 'get_id_success', 1)
local record = redis.call('HGET', clock, head[1]) or ''
local horizon = tonumber(ARGV[4])
local before = tonumber(string.match(record, '^(%-?%d+) '))
if before ~= nil and before > horizon then horizon = before end
redis.call('HSET', clock, head[1], string.format('%d %d %d %d', horizon, ARGV[5], ARGV[6], now_ms))
queue_leave(KEYS[5], ARGV[7])
return {1, client, head[1], expiry_ms, now_ms, record}
