package ledger

import "github.com/redis/go-redis/v9"

// A lease is a hold like any other (P hold:<leaseID>, a member "<leaseID>|<amt>" in the user's hexp and, for a
// limited key's lease, in the key's, its amount counted in held on both), so everything that knows holds — the sweep of expired holds, Forget keeping held, every
// other node's reservation seeing less room — treats a lease the same way. Two more keys:
//
//	P hold:<leaseID>  also has seq: the last flush applied to it
//	P lseq:<leaseID>  STRING the last flush applied, kept (PEXPIRE = settled TTL) after the lease is gone, so
//	                  a flush retried after an ambiguous failure is recognised even when it ended the lease
//
// leaseScript: ARGV P, leaseID, uid, seq, charge, want, now, expiry (ms score), holdKeyTTL, sweepLimit, fresh,
// seqTTL, tid (0: a lease of the user's balance alone; else also of that limited key's quota). One flush of one
// lease, atomically: charge the amount the node settled locally since the last flush (bal and held both go
// down by it, on the user and on the key, and so does the lease: the money was held, so it is always chargeable
// in full, as a hold is), then resize the lease towards want — grow by at most half of what is free (bal - held,
// the smaller of the user's and the key's), shrink (want below amt), or end it (want 0). fresh = 1 creates the
// lease. Returns {0, amt, charged, free} applied (amt = the lease's new amount, 0 = ended or not granted;
// charged = charge unless the lease held less than the node charged, which its accounting rules out; free =
// bal - held after it, the smaller of the two, below zero when money was taken back from under holds and
// leases), {1, amt} this seq was already applied, {-2, 0} the user's balance is not loaded, {-2, 1} the key's
// quota is not loaded, {-3, charged} the lease is gone (expired and swept, or Redis lost it): the charge was
// taken from what is free, up to that, and nothing is leased.
var leaseScript = redis.NewScript(luaCommon + `
local lid, uid, tid = ARGV[2], ARGV[3], ARGV[13]
local seq, charge, want = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local now, lim = ARGV[7], tonumber(ARGV[10])
local accts = {{P .. 'bal:u:' .. uid, P .. 'hexp:u:' .. uid}}
if tid ~= '0' then accts[2] = {P .. 'bal:t:' .. tid, P .. 'hexp:t:' .. tid} end
local hold, lseq = P .. 'hold:' .. lid, P .. 'lseq:' .. lid
local last = tonumber(redis.call('GET', lseq) or '0')
if seq <= last then
  return {1, tonumber(redis.call('HGET', hold, 'amt') or '0')}
end
for i = 1, #accts do sweep(accts[i][1], accts[i][2], now, lim) end
local function free()
  local f = nil
  for i = 1, #accts do
    local v = avail(accts[i][1])
    if v == nil then return nil, i - 1 end
    if f == nil or v < f then f = v end
  end
  return f
end
local function incr(field, n)
  for i = 1, #accts do redis.call('HINCRBY', accts[i][1], field, int(n)) end
end
local av, missing = free()
if av == nil then return {-2, missing} end
local amt = tonumber(redis.call('HGET', hold, 'amt') or '-1')
redis.call('SET', lseq, ARGV[4], 'PX', ARGV[12])
if amt < 0 then
  if ARGV[11] ~= '1' then
    local take = math.min(charge, math.max(av, 0))
    incr('bal', -take)
    return {-3, take}
  end
  amt = 0
else
  for i = 1, #accts do redis.call('ZREM', accts[i][2], lid .. '|' .. int(amt)) end
end
local c = math.min(charge, amt)
local over = math.min(charge - c, math.max(av, 0))
incr('bal', -(c + over))
incr('held', -c)
amt = amt - c
local size = amt
if want > amt then
  size = amt + math.min(want - amt, math.floor(math.max(av - over, 0) / 2))
elseif want < amt then
  size = want
end
incr('held', size - amt)
if size <= 0 then
  redis.call('DEL', hold)
  return {0, 0, c + over, (free())}
end
redis.call('HSET', hold, 'u', uid, 't', tid, 'tl', tid ~= '0' and '1' or '0', 'amt', int(size), 'seq', ARGV[4])
for i = 1, #accts do redis.call('ZADD', accts[i][2], ARGV[8], lid .. '|' .. int(size)) end
redis.call('PEXPIRE', hold, ARGV[9])
return {0, size, c + over, (free())}
`)
