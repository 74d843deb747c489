-- Record a sharded pool's layout (src/lease/layout.rs), or change it, only
-- if it is still what the caller read.
-- KEYS[1] ns:layout, KEYS[2] ns:ids, KEYS[3] ns:stats, KEYS[4] ns:clients
-- ARGV[1] the layout to record, ARGV[2] the layout the caller read ('' for
--         none), ARGV[3] the text left in ns:ids and ns:stats with a new
--         layout, for the clients that read no layout (the Go tool, an older
--         yaraus): it refuses them (a string, not a pool's sorted set or
--         hash) and, read by hand, says why
-- Returns {1, layout} when recorded;
--         {0, layout} when the layout is not what the caller read (another
--           init changed it first): nothing written;
--         {-1, key} when there is no layout but `key`, of a pool that is not
--           sharded, exists: nothing written.
local layout, ids, stats, clients = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local t = redis.call('TYPE', layout)['ok']
if t ~= 'none' and t ~= 'string' then
  return redis.error_reply('YARAUS_WRONGTYPE ' .. layout .. ' is a ' .. t .. ', not the layout of a pool')
end
local current = redis.call('GET', layout) or ''
if current ~= ARGV[2] then
  return {0, current}
end
if current == '' then
  for _, key in ipairs({ids, stats, clients}) do
    if redis.call('EXISTS', key) == 1 then
      return {-1, key}
    end
  end
  redis.call('SET', ids, ARGV[3])
  redis.call('SET', stats, ARGV[3])
end
redis.call('SET', layout, ARGV[1])
return {1, ARGV[1]}
