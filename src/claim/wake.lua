-- Waking the waiters of what a script frees, and the queue of waiters that a
-- release wakes one at a time (src/claim/wake.rs). Put in front of every
-- script that frees something a waiter may be waiting for, and of every
-- attempt that may join or leave the queue (a script cannot include another,
-- so the Rust side concatenates this prelude with the script body). Called in
-- the same script as the release or the attempt, so that no waiter can see
-- the resource busy after the message, nor be queued without having been
-- refused.
--
-- The queue (KEYS: a sorted set beside the resource's key, same hash tag):
-- member = a waiter's place (random, chosen once per wait), score = its
-- arrival (the waiter's wall clock in µs when it started waiting, the same on
-- every master, so that all masters order their waiters alike). A waiter
-- listens on its own channel, CHANNEL:MEMBER, and on CHANNEL.
--
-- wake(channel, mode, queue, waker): channel '' or nil for none; mode
-- 'spublish' on a Redis Cluster (sharded: the channel carries the key's hash
-- tag), else a plain PUBLISH; queue the queue's key, '' or nil for none;
-- waker the releaser's own place ('' for none). With a queue it pops the
-- first place and publishes on that waiter's channel; PUBLISH counts who
-- heard, so a place whose waiter has gone (no longer subscribed: it died, or
-- holds now) is dropped and the next one is tried. Only when nobody in the
-- queue heard does it publish on CHANNEL, which wakes every listener (waiters
-- that do not queue: shared holders, a waiter that could not join); the
-- message is the waker's place, so that a waiter undoing its own failed
-- attempt does not wake itself. pcall: a user whose ACL denies the channel
-- still frees what it frees, and its waiters find out by polling.
local WAKE_TRIES = 32

-- How many heard `message` on `channel` (0 when the ACL denies it).
local function publish(mode, channel, message)
  local heard
  if mode == 'spublish' then
    heard = redis.pcall('SPUBLISH', channel, message)
  else
    heard = redis.pcall('PUBLISH', channel, message)
  end
  if type(heard) == 'number' then
    return heard
  end
  return 0
end

local function wake(channel, mode, queue, waker)
  if channel == nil or channel == '' then
    return
  end
  if queue and queue ~= '' and redis.call('TYPE', queue)['ok'] == 'zset' then
    for _ = 1, WAKE_TRIES do
      local head = redis.call('ZRANGE', queue, 0, 0)[1]
      if not head then
        break
      end
      redis.call('ZREM', queue, head)
      if publish(mode, channel .. ':' .. head, '') > 0 then
        return
      end
    end
  end
  publish(mode, channel, waker or '')
end

-- A refused attempt joins the queue: place 'ARRIVAL:KEEP:MEMBER' (arrival
-- the score, KEEP ms the queue lives on after its last join, so that the
-- places of waiters that died go with it), '' for none. NX: a waiter keeps
-- its place, and one that was woken and refused again takes its old place
-- back. A queue key of another type is left alone (the waiter polls).
local function queue_join(queue, place)
  if queue == nil or queue == '' or place == nil or place == '' then
    return
  end
  local arrival, keep, member = string.match(place, '^(%d+):(%d+):(.+)$')
  if not member then
    return
  end
  local t = redis.call('TYPE', queue)['ok']
  if t ~= 'none' and t ~= 'zset' then
    return
  end
  redis.call('ZADD', queue, 'NX', arrival, member)
  if redis.call('PTTL', queue) < tonumber(keep) then
    redis.call('PEXPIRE', queue, keep)
  end
end

-- A successful attempt leaves the queue (same place argument).
local function queue_leave(queue, place)
  if queue == nil or queue == '' or place == nil or place == '' then
    return
  end
  local member = string.match(place, '^%d+:%d+:(.+)$')
  if member and redis.call('TYPE', queue)['ok'] == 'zset' then
    redis.call('ZREM', queue, member)
  end
end
