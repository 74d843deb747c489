-- Take the lock on one node if it is free, and count a fencing token in the
-- same step (counter.lua and shared.lua are put in front of this script).
-- KEYS[1] the lock: a string holding the holder's token, with a PX expiry
--         (the key and value of redis-py's Lock, redsync and node-redlock)
-- KEYS[2] the fencing counter (a string of decimal digits, never expires)
-- ARGV[1] our token
-- ARGV[2] ttl, milliseconds
-- ARGV[3] fencing: 'incr'    one master: the counter + 1 is our fencing token
--                  'propose' several masters: our vote in the majority
--                            sequence, set-if-less-than ARGV[4]
-- ARGV[4] the proposed fencing token, for 'propose'
-- KEYS[3] (optional) the queue of waiters (wake.lua, put in front of this
--         script): joined when refused, left when taken
-- ARGV[5] '' or, for a writer that will wait, 'MS:MARK': its
--         'writer-waiting:' member MARK is added (MS ms from now) where shared
--         holders have the lock, so that no new shared holder is admitted
--         before it (shared.lua). One argument, not two: a server that wants
--         a password refuses a command of more than 10 words from a client
--         that has not given one with a protocol error, not NOAUTH.
-- ARGV[6] (optional) our place in the queue, 'ARRIVAL:KEEP:MEMBER' (wake.lua),
--         '' for none
-- Returns {1, voted, counter[, before]} taken (or already ours); voted = 1 when
--                                      the increment or the proposal stands;
--                                      before: for an accepted proposal, the
--                                      counter it replaced (a node whose
--                                      counter is missing never votes), so
--                                      that a failed attempt can put it back
--                                      (undo.lua);
--                                      counter = the counter afterwards
--         {0, holder, pttl, counter}   held by another value (pttl -1: the
--                                      key has no expiry)
-- counter is '0' where the fencing counter is missing (for the caller's
-- guess only: such a node has not voted).
--         {0, '', pttl, counter, n}    n shared holders have it (pttl: the
--                                      first of them expires)
--         {2, type}                    the key holds another type
-- Nothing is written unless the lock is taken on this node (a fencing vote
-- counts only where we hold the lock: the argument is in src/lock/mod.rs),
-- but for a waiting writer's mark among shared holders and a waiter's place
-- in the queue, which hold no vote.
--
-- The free lock comes first and costs two calls (SET NX, then the vote): this
-- script runs on every acquisition, and its calls are most of what the
-- server spends on one.
local key, fence, queue = KEYS[1], KEYS[2], KEYS[3]
local token, ttl, mode, place = ARGV[1], ARGV[2], ARGV[3], ARGV[6]

if mode == 'propose' and not is_counter(ARGV[4]) then
  return redis.error_reply('YARAUS_BADARG proposed fencing token ' .. tostring(ARGV[4]) .. ' is not a 64-bit counter')
end

-- Counts our fencing token: returns voted (1 or 0) and the counter
-- afterwards, or nil and the reason the counter is broken (nothing written).
local function vote()
  if mode == 'incr' then
    local counter, err = counter_incr(fence)
    if not counter then
      return nil, err
    end
    return 1, counter
  elseif mode == 'propose' then
    local before, err = counter_read(fence)
    if before == nil then
      return nil, err
    end
    local outcome, value = counter_propose(fence, ARGV[4], ARGV[4])
    if outcome == nil then
      return nil, value
    end
    if outcome == 1 then
      return 1, value, before
    end
    -- 2: the counter is missing here; this node does not vote.
    return 0, value or '0'
  end
  local counter, err = counter_read(fence)
  if counter == nil then
    return nil, err
  end
  return 0, counter or '0'
end

-- Votes for the token we just set; undoes the SET when the counter is
-- broken (a script runs atomically, so nobody can have seen it).
local function vote_or_undo()
  local voted, counter, before = vote()
  if not voted then
    redis.call('DEL', key)
    return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. counter)
  end
  queue_leave(queue, place)
  return {1, voted, counter, before}
end

if redis.call('SET', key, token, 'NX', 'PX', ttl) then
  return vote_or_undo()
end

-- The key exists: another holder's lock, shared holders, something else,
-- or ours (an attempt repeated with the same token).
local t = redis.call('TYPE', key)['ok']
if t == 'zset' then
  -- The counter is checked first, so that a broken one changes nothing.
  local counter, err = counter_read(fence)
  if counter == nil then
    return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. err)
  end
  local now = server_ms()
  local holders, first = shared_state(key, now)
  if holders == 0 then
    -- Only waiting writers (or nothing live): the first to come takes it.
    redis.call('DEL', key)
    redis.call('SET', key, token, 'PX', ttl)
    return vote_or_undo()
  end
  local mark_ms, mark = string.match(ARGV[5], '^(%d+):(.+)$')
  if mark then
    redis.call('ZADD', key, now + tonumber(mark_ms), mark)
    shared_expire(key)
  end
  queue_join(queue, place)
  return {0, '', first - now, counter or '0', holders}
end
if t ~= 'string' then
  return {2, t}
end
local holder = redis.call('GET', key)
if holder ~= token then
  local counter, err = counter_read(fence)
  if counter == nil then
    return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. err)
  end
  queue_join(queue, place)
  return {0, holder, redis.call('PTTL', key), counter or '0'}
end
local voted, counter, before = vote()
if not voted then
  return redis.error_reply('YARAUS_WRONGTYPE fencing ' .. counter)
end
redis.call('SET', key, token, 'PX', ttl)
queue_leave(queue, place)
return {1, voted, counter, before}
