-- One page of a pool's leased ids, in score order (lease expiry). Read-only.
-- KEYS[1] ns:ids
-- ARGV[1] the page's lower bound on scores, exclusive: the first page's is
--         the server time of the listing, each next page's the last score
--         of the page before (as this script returned it)
-- ARGV[2] n, the page size
-- Returns {more, last, {member, ...}}: the members whose score is above
-- ARGV[1], the first n of them in score order and then every other member
-- whose score equals the n-th's, so that a page never splits the members of
-- one score and the next page can start strictly above `last` (the score
-- of the page's last member, as Redis writes it; '' for an empty page);
-- `more` is 1 when there may be members above `last`.
local ids, n = KEYS[1], tonumber(ARGV[2])
local page = redis.call('ZRANGE', ids, '(' .. ARGV[1], '+inf', 'BYSCORE', 'LIMIT', 0, n, 'WITHSCORES')
local members = {}
if #page == 0 then
  return {0, '', members}
end
local last = page[#page]
for i = 1, #page, 2 do
  if page[i + 1] ~= last then
    members[#members + 1] = page[i]
  end
end
-- Every member of the last score, those beyond the n-th included.
for _, member in ipairs(redis.call('ZRANGE', ids, last, last, 'BYSCORE')) do
  members[#members + 1] = member
end
local more = 0
if #page == 2 * n then more = 1 end
return {more, last, members}
