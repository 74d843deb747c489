-- Waking the waiters of what a script frees (src/claim/wake.rs), put in front
-- of every script that frees something a waiter may be waiting for (a script
-- cannot include another, so the Rust side concatenates this prelude with the
-- script body). Called in the same script as the release, so that no waiter
-- can see the resource busy after the message.
--
-- wake(channel, mode): channel '' or nil for none; mode 'spublish' on a Redis
-- Cluster (sharded: the channel carries the key's hash tag), else a plain
-- PUBLISH. pcall: a user whose ACL denies the channel still frees what it
-- frees, and its waiters find out by polling.
local function wake(channel, mode)
  if channel == nil or channel == '' then
    return
  elseif mode == 'spublish' then
    redis.pcall('SPUBLISH', channel, '')
  else
    redis.pcall('PUBLISH', channel, '')
  end
end

