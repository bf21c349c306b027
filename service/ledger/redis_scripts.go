package ledger

import "github.com/redis/go-redis/v9"

// Key layout under the prefix P (all scripts derive keys from P, so on Redis Cluster the prefix must carry a
// hash tag such as "{tg}:" to keep every key of the ledger in one slot):
//
//	P bal:u:<id>     HASH bal (absent = not loaded), held (sum of holds), ver (bumped by Forget/Adjust/Set)
//	P bal:t:<id>     HASH, same fields, for a limited key
//	P hexp:u:<id>    ZSET "<reqID>|<amount>" scored by expiry (ms), so expired holds can be given back
//	P hexp:t:<id>    ZSET, same, for a limited key
//	P win:<tid>:<start>:<end>   HASH bal (spent so far; absent = not loaded), held, ver: a key's spend window
//	                            (start, end in unix seconds); PEXPIREAT = end + hold TTL + grace
//	P wexp:<tid>:<start>:<end>  ZSET, as hexp, for the window; same expiry
//	P hold:<reqID>   HASH u, t, tl (1 = token limited), amt, w (the windows: "<tid>:<s>:<e>,<limit> ..." or
//	                 absent); PEXPIRE = hold TTL + grace
//	P settled:<reqID> STRING "held:charged:shortfall"; PEXPIRE = settled TTL
//
// Lua numbers are doubles, exact to 2^53 units (9e9 USD). Every number written back goes through int(), because
// Lua would otherwise format 1e14 as "1e+14", which HINCRBY rejects.

// luaCommon is prepended to every script that may sweep expired holds.
const luaCommon = `
local P = ARGV[1]
local function int(n) return string.format('%d', n) end
local function sweep(acct, hexp, now, limit)
  local due = redis.call('ZRANGEBYSCORE', hexp, '-inf', now, 'LIMIT', 0, limit)
  for i = 1, #due do
    local m = due[i]
    local cut = string.find(m, '|[^|]*$')
    local amt = tonumber(string.sub(m, cut + 1))
    redis.call('HINCRBY', acct, 'held', int(-amt))
    redis.call('ZREM', hexp, m)
    redis.call('DEL', P .. 'hold:' .. string.sub(m, 1, cut - 1))
  end
end
local function avail(acct)
  local v = redis.call('HMGET', acct, 'bal', 'held')
  if not v[1] then return nil end
  return tonumber(v[1]) - (tonumber(v[2]) or 0)
end
`

// reserveScript: ARGV P, reqID, amount, now, expiry, holdKeyTTL, limited, uid, tid, sweepLimit, then per
// window three more: "<tid>:<s>:<e>", limit, key expiry (unix ms). Returns {0} ok, {-1} duplicate,
// {-2, needUser, needToken, "<windows to load, space separated>"} not loaded, {-4} user short, {-5} token
// short, {-6, i} window i (1-based) short. A key without windows does exactly the work it did before them.
var reserveScript = redis.NewScript(luaCommon + `
local req, amt, now, lim = ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[10])
local limited = ARGV[7] == '1'
local ua, ux = P .. 'bal:u:' .. ARGV[8], P .. 'hexp:u:' .. ARGV[8]
local ta, tx = P .. 'bal:t:' .. ARGV[9], P .. 'hexp:t:' .. ARGV[9]
sweep(ua, ux, now, lim)
if limited then sweep(ta, tx, now, lim) end
local nw = (#ARGV - 10) / 3
for i = 1, nw do
  local w = ARGV[8 + 3 * i]
  sweep(P .. 'win:' .. w, P .. 'wexp:' .. w, now, lim)
end
local hold = P .. 'hold:' .. req
if redis.call('EXISTS', hold) == 1 or redis.call('EXISTS', P .. 'settled:' .. req) == 1 then return {-1} end
local uav = avail(ua)
local tav = nil
if limited then tav = avail(ta) end
local need = {}
local wroom = {}
for i = 1, nw do
  local v = redis.call('HMGET', P .. 'win:' .. ARGV[8 + 3 * i], 'bal', 'held')
  if not v[1] then
    need[#need + 1] = ARGV[8 + 3 * i]
  else
    wroom[i] = tonumber(ARGV[9 + 3 * i]) - tonumber(v[1]) - (tonumber(v[2]) or 0)
  end
end
if uav == nil or (limited and tav == nil) or #need > 0 then
  return {-2, uav == nil and 1 or 0, (limited and tav == nil) and 1 or 0, table.concat(need, ' ')}
end
if uav < amt then return {-4} end
if limited and tav < amt then return {-5} end
for i = 1, nw do
  if wroom[i] < amt then return {-6, i} end
end
local m = req .. '|' .. ARGV[3]
redis.call('HINCRBY', ua, 'held', ARGV[3])
redis.call('ZADD', ux, ARGV[5], m)
if limited then
  redis.call('HINCRBY', ta, 'held', ARGV[3])
  redis.call('ZADD', tx, ARGV[5], m)
end
redis.call('HSET', hold, 'u', ARGV[8], 't', ARGV[9], 'tl', ARGV[7], 'amt', ARGV[3])
if nw > 0 then
  local ws = {}
  for i = 1, nw do
    local w = ARGV[8 + 3 * i]
    local wa, wx = P .. 'win:' .. w, P .. 'wexp:' .. w
    redis.call('HINCRBY', wa, 'held', ARGV[3])
    redis.call('ZADD', wx, ARGV[5], m)
    redis.call('PEXPIREAT', wa, ARGV[10 + 3 * i])
    redis.call('PEXPIREAT', wx, ARGV[10 + 3 * i])
    ws[i] = w .. ',' .. ARGV[9 + 3 * i]
  end
  redis.call('HSET', hold, 'w', table.concat(ws, ' '))
end
redis.call('PEXPIRE', hold, ARGV[6])
return {0}
`)

// settleScript: ARGV P, reqID, actual, now, settledTTL, sweepLimit.
// Returns {1, "h:c:s"} duplicate, {-3} no hold, {-2, needUser, needToken, uid, tid, "<windows to load>"} not
// loaded, {0, held, charged, shortfall} settled. The arithmetic mirrors settleMath; the extra above the hold
// is bounded by every window's room too, and each window is charged what the user is.
var settleScript = redis.NewScript(luaCommon + `
local req, now, lim = ARGV[2], ARGV[4], tonumber(ARGV[6])
local settled = P .. 'settled:' .. req
local done = redis.call('GET', settled)
if done then return {1, done} end
local hold = P .. 'hold:' .. req
local h = redis.call('HMGET', hold, 'u', 't', 'tl', 'amt', 'w')
if not h[4] then return {-3} end
local limited = h[3] == '1'
local ua, ux = P .. 'bal:u:' .. h[1], P .. 'hexp:u:' .. h[1]
local ta, tx = P .. 'bal:t:' .. h[2], P .. 'hexp:t:' .. h[2]
local wins = {}
if h[5] then
  for w, l in string.gmatch(h[5], '([^ ,]+),([^ ]+)') do wins[#wins + 1] = {w, tonumber(l)} end
end
sweep(ua, ux, now, lim)
if limited then sweep(ta, tx, now, lim) end
for i = 1, #wins do sweep(P .. 'win:' .. wins[i][1], P .. 'wexp:' .. wins[i][1], now, lim) end
if redis.call('EXISTS', hold) == 0 then return {-3} end
local uav = avail(ua)
local tav = nil
if limited then tav = avail(ta) end
local need = {}
local room = nil
for i = 1, #wins do
  local v = redis.call('HMGET', P .. 'win:' .. wins[i][1], 'bal', 'held')
  if not v[1] then
    need[#need + 1] = wins[i][1]
  else
    local r = wins[i][2] - tonumber(v[1]) - (tonumber(v[2]) or 0)
    if room == nil or r < room then room = r end
  end
end
if uav == nil or (limited and tav == nil) or #need > 0 then
  return {-2, uav == nil and 1 or 0, (limited and tav == nil) and 1 or 0, h[1], h[2], table.concat(need, ' ')}
end
local held, actual = tonumber(h[4]), tonumber(ARGV[3])
local charged, short = actual, 0
if actual > held then
  local r = math.max(uav, 0)
  if limited then r = math.min(r, math.max(tav, 0)) end
  if room ~= nil then r = math.min(r, math.max(room, 0)) end
  local take = math.min(actual - held, r)
  charged, short = held + take, actual - held - take
end
local m = req .. '|' .. h[4]
redis.call('HINCRBY', ua, 'held', int(-held))
redis.call('HINCRBY', ua, 'bal', int(-charged))
redis.call('ZREM', ux, m)
if limited then
  redis.call('HINCRBY', ta, 'held', int(-held))
  redis.call('HINCRBY', ta, 'bal', int(-charged))
  redis.call('ZREM', tx, m)
end
for i = 1, #wins do
  local wa = P .. 'win:' .. wins[i][1]
  redis.call('HINCRBY', wa, 'held', int(-held))
  redis.call('HINCRBY', wa, 'bal', int(charged))
  redis.call('ZREM', P .. 'wexp:' .. wins[i][1], m)
end
redis.call('DEL', hold)
local res = int(held) .. ':' .. int(charged) .. ':' .. int(short)
redis.call('SET', settled, res, 'PX', ARGV[5])
return {0, res}
`)

// releaseScript: ARGV P, reqID. Returns 1 if a hold was released, 0 if there was none. Needs no loaded
// balance: held is kept even while bal is forgotten. ("-0" is not an integer to Redis, hence the format.)
var releaseScript = redis.NewScript(`
local P, req = ARGV[1], ARGV[2]
local hold = P .. 'hold:' .. req
local h = redis.call('HMGET', hold, 'u', 't', 'tl', 'amt', 'w')
if not h[4] then return 0 end
local neg = string.format('%d', -tonumber(h[4]))
local m = req .. '|' .. h[4]
redis.call('HINCRBY', P .. 'bal:u:' .. h[1], 'held', neg)
redis.call('ZREM', P .. 'hexp:u:' .. h[1], m)
if h[3] == '1' then
  redis.call('HINCRBY', P .. 'bal:t:' .. h[2], 'held', neg)
  redis.call('ZREM', P .. 'hexp:t:' .. h[2], m)
end
if h[5] then
  for w in string.gmatch(h[5], '([^ ,]+),[^ ]+') do
    redis.call('HINCRBY', P .. 'win:' .. w, 'held', neg)
    redis.call('ZREM', P .. 'wexp:' .. w, m)
  end
end
redis.call('DEL', hold)
return 1
`)

// liveScript: ARGV P, kind ("u" or "t"), id, now, sweepLimit. Returns {0, bal - held} or {-2} not loaded.
var liveScript = redis.NewScript(luaCommon + `
local acct = P .. 'bal:' .. ARGV[2] .. ':' .. ARGV[3]
sweep(acct, P .. 'hexp:' .. ARGV[2] .. ':' .. ARGV[3], ARGV[4], tonumber(ARGV[5]))
local v = avail(acct)
if v == nil then return {-2} end
return {0, v}
`)

// loadScript: KEYS acct; ARGV value, ver[, expiry unix ms]. Sets bal only if nobody loaded it and no
// Forget/Adjust/Set ran since the caller read ver (a load that raced with an admin write would otherwise
// resurrect the old balance); a window also gets its expiry. Returns 1 if bal is now set (by us or a
// concurrent loader), 0 if the caller must read ver and load again.
var loadScript = redis.NewScript(`
local ver = redis.call('HGET', KEYS[1], 'ver') or '0'
if ver ~= ARGV[2] then return 0 end
redis.call('HSETNX', KEYS[1], 'bal', ARGV[1])
if ARGV[3] then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 1
`)

// resetScript: KEYS window. Drops a live window's spent and bumps ver (a load in flight is discarded); an
// absent window is left absent (nothing to reset, and no key without an expiry is created).
var resetScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HDEL', KEYS[1], 'bal')
  redis.call('HINCRBY', KEYS[1], 'ver', 1)
end
return 1
`)

// adjustScript: KEYS acct; ARGV delta. Adds delta when loaded; otherwise only bumps ver so that a load in
// flight (which may have read SQL before this top-up) is discarded.
var adjustScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'bal') == 1 then
  redis.call('HINCRBY', KEYS[1], 'bal', ARGV[1])
end
redis.call('HINCRBY', KEYS[1], 'ver', 1)
return 1
`)
