package ledger

import "github.com/redis/go-redis/v9"

// A lease is a hold like any other (P hold:<leaseID>, a member "<leaseID>|<amt>" in the user's hexp, its amount
// counted in held), so everything that knows holds — the sweep of expired holds, Forget keeping held, every
// other node's reservation seeing less room — treats a lease the same way. Two more keys:
//
//	P hold:<leaseID>  also has seq: the last flush applied to it
//	P lseq:<leaseID>  STRING the last flush applied, kept (PEXPIRE = settled TTL) after the lease is gone, so
//	                  a flush retried after an ambiguous failure is recognised even when it ended the lease
//
// leaseScript: ARGV P, leaseID, uid, seq, charge, want, now, expiry (ms score), holdKeyTTL, sweepLimit, fresh,
// seqTTL. One flush of one lease, atomically: charge the amount the node settled locally since the last flush
// (bal and held both go down by it, and so does the lease: the money was held, so it is always chargeable in
// full, as a hold is), then resize the lease towards want — grow by at most half of what the user has free
// (bal - held), shrink (want below amt), or end it (want 0). fresh = 1 creates the lease.
// Returns {0, amt, charged, free} applied (amt = the lease's new amount, 0 = ended or not granted; charged =
// charge unless the lease held less than the node charged, which its accounting rules out; free = bal - held
// after it, below zero when money was taken back from under holds and leases), {1, amt} this seq was
// already applied, {-2} the user's balance is not loaded, {-3, charged} the lease is gone (expired and swept,
// or Redis lost it): the charge was taken from what the user has free, up to that, and nothing is leased.
var leaseScript = redis.NewScript(luaCommon + `
local lid, uid = ARGV[2], ARGV[3]
local seq, charge, want = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local now, lim = ARGV[7], tonumber(ARGV[10])
local ua, ux = P .. 'bal:u:' .. uid, P .. 'hexp:u:' .. uid
local hold, lseq = P .. 'hold:' .. lid, P .. 'lseq:' .. lid
local last = tonumber(redis.call('GET', lseq) or '0')
if seq <= last then
  return {1, tonumber(redis.call('HGET', hold, 'amt') or '0')}
end
sweep(ua, ux, now, lim)
local av = avail(ua)
if av == nil then return {-2} end
local amt = tonumber(redis.call('HGET', hold, 'amt') or '-1')
redis.call('SET', lseq, ARGV[4], 'PX', ARGV[12])
if amt < 0 then
  if ARGV[11] ~= '1' then
    local take = math.min(charge, math.max(av, 0))
    redis.call('HINCRBY', ua, 'bal', int(-take))
    return {-3, take}
  end
  amt = 0
else
  redis.call('ZREM', ux, lid .. '|' .. int(amt))
end
local c = math.min(charge, amt)
local over = math.min(charge - c, math.max(av, 0))
redis.call('HINCRBY', ua, 'bal', int(-(c + over)))
redis.call('HINCRBY', ua, 'held', int(-c))
amt = amt - c
local size = amt
if want > amt then
  size = amt + math.min(want - amt, math.floor(math.max(av - over, 0) / 2))
elseif want < amt then
  size = want
end
redis.call('HINCRBY', ua, 'held', int(size - amt))
if size <= 0 then
  redis.call('DEL', hold)
  return {0, 0, c + over, avail(ua)}
end
redis.call('HSET', hold, 'u', uid, 't', '0', 'tl', '0', 'amt', int(size), 'seq', ARGV[4])
redis.call('ZADD', ux, ARGV[8], lid .. '|' .. int(size))
redis.call('PEXPIRE', hold, ARGV[9])
return {0, size, c + over, avail(ua)}
`)
