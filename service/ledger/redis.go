package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// holdKeyGrace keeps a hold hash a little longer than its expiry score, so the sweep (which uses the caller's
// clock) rather than Redis' own expiry is what normally ends an abandoned hold.
const holdKeyGrace = time.Minute

// maxLoadRounds bounds how often one call reloads an account that keeps being forgotten or adjusted under it.
const maxLoadRounds = 5

// Redis is the Ledger shared by several nodes. Every money movement is one Lua script (one round trip on the
// hot path, EVALSHA with EVAL fallback), so Reserve is atomic on both accounts and Settle is idempotent.
// The key layout is documented in redis_scripts.go.
type Redis struct {
	rdb     redis.UniversalClient
	prefix  string
	loader  Loader
	cfg     config
	batcher *Batcher // non-nil: scripts are pipelined with their neighbours
}

var _ Ledger = (*Redis)(nil)

// NewRedis builds a Redis ledger whose keys all start with prefix (e.g. "tg:"; "{tg}:" on Redis Cluster).
func NewRedis(client redis.UniversalClient, prefix string, loader Loader, opts ...Option) *Redis {
	return &Redis{rdb: client, prefix: prefix, loader: loader, cfg: newConfig(opts)}
}

func (r *Redis) acctKey(kind string, id int64) string {
	return r.prefix + "bal:" + kind + ":" + strconv.FormatInt(id, 10)
}

func (r *Redis) nowMS() int64 { return r.cfg.now().UnixMilli() }

// ensure loads one account from SQL unless it is already live.
func (r *Redis) ensure(ctx context.Context, kind string, id int64) error {
	load, what := r.loader.LoadUser, "user"
	if kind == "t" {
		load, what = r.loader.LoadToken, "token"
	}
	return r.ensureKey(ctx, r.acctKey(kind, id), fmt.Sprintf("%s %d", what, id), func() (int64, error) { return load(ctx, id) })
}

// winSuffix names a window in the key layout: "<tid>:<start>:<end>" (unix seconds).
func winSuffix(tokenID int64, w Window) string {
	return strconv.FormatInt(tokenID, 10) + ":" + strconv.FormatInt(w.Start.Unix(), 10) + ":" + strconv.FormatInt(w.End.Unix(), 10)
}

// winExpiry is when a window's keys go: after its period, once every hold made in it has settled or expired,
// and never before a hold made now could (a request admitted just before the period ended).
func (r *Redis) winExpiry(end int64) int64 {
	keep := r.cfg.holdTTL + holdKeyGrace
	return max(time.Unix(end, 0).Add(keep).UnixMilli(), r.nowMS()+keep.Milliseconds())
}

// ensureWindows loads the windows named by a script's space-separated "<tid>:<start>:<end>" list.
func (r *Redis) ensureWindows(ctx context.Context, list string) error {
	for _, w := range strings.Fields(list) {
		var tid, start, end int64
		if _, err := fmt.Sscanf(strings.ReplaceAll(w, ":", " "), "%d %d %d", &tid, &start, &end); err != nil {
			return fmt.Errorf("window %q: %w", w, err)
		}
		err := r.ensureKey(ctx, r.prefix+"win:"+w, "window "+w, func() (int64, error) {
			return r.loader.LoadSpent(ctx, tid, time.Unix(start, 0), time.Unix(end, 0))
		}, r.winExpiry(end))
		if err != nil {
			return err
		}
	}
	return nil
}

// ensureKey loads one live value from SQL unless it is already set. The version check in loadScript discards
// a value read before a concurrent Forget/Adjust/SetToken/ResetWindows, which would otherwise overwrite the
// newer state.
func (r *Redis) ensureKey(ctx context.Context, key, what string, load func() (int64, error), expireAt ...int64) error {
	for range maxLoadRounds {
		ver, err := r.rdb.HGet(ctx, key, "ver").Result()
		if errors.Is(err, redis.Nil) {
			ver = "0"
		} else if err != nil {
			return fmt.Errorf("load %s: read version: %w", what, err)
		}
		v, err := load()
		if err != nil {
			return fmt.Errorf("load %s: %w", what, err)
		}
		args := []any{v, ver}
		for _, e := range expireAt {
			args = append(args, e)
		}
		ok, err := loadScript.Run(ctx, r.rdb, []string{key}, args...).Int()
		if err != nil {
			return fmt.Errorf("load %s: store: %w", what, err)
		}
		if ok == 1 {
			return nil
		}
	}
	return fmt.Errorf("load %s: balance changed %d times during load", what, maxLoadRounds)
}

// ensureNeeded loads the accounts a script reported as not loaded.
func (r *Redis) ensureNeeded(ctx context.Context, needUser, needToken bool, uid, tid int64) error {
	if needUser {
		if err := r.ensure(ctx, "u", uid); err != nil {
			return err
		}
	}
	if needToken {
		if err := r.ensure(ctx, "t", tid); err != nil {
			return err
		}
	}
	return nil
}

// Reserve implements Ledger.
func (r *Redis) Reserve(ctx context.Context, reqID string, acct Account, amount int64) error {
	if err := validateReserve(reqID, acct, amount); err != nil {
		return err
	}
	limited := "0"
	if acct.TokenLimited {
		limited = "1"
	}
	keys := []string{r.prefix + "hold:" + reqID} // routes the script on a cluster; the script derives the rest
	var wargs []any
	for _, w := range acct.Windows {
		wargs = append(wargs, winSuffix(acct.TokenID, w), w.Limit, r.winExpiry(w.End.Unix()))
	}
	for range maxLoadRounds {
		now := r.nowMS()
		args := append([]any{r.prefix, reqID, amount, now, now + r.cfg.holdTTL.Milliseconds(),
			(r.cfg.holdTTL + holdKeyGrace).Milliseconds(), limited, acct.UserID, acct.TokenID, r.cfg.sweepLimit,
		}, wargs...)
		res, err := r.run(ctx, reserveScript, keys, args...)
		if err != nil {
			return fmt.Errorf("reserve %s: %w", reqID, err)
		}
		switch code := asInt(res, 0); code {
		case 0:
			return nil
		case -1:
			return fmt.Errorf("reserve %s: %w", reqID, ErrDuplicateHold)
		case -4:
			return fmt.Errorf("reserve %s: %w", reqID, ErrInsufficientUser)
		case -5:
			return fmt.Errorf("reserve %s: %w", reqID, ErrInsufficientToken)
		case -6:
			i := asInt(res, 1) - 1
			if i < 0 || int(i) >= len(acct.Windows) {
				return fmt.Errorf("reserve %s: unexpected script result %v", reqID, res)
			}
			return fmt.Errorf("reserve %s: %w", reqID, &BudgetError{Window: acct.Windows[i]})
		case -2:
			if err := r.ensureNeeded(ctx, asInt(res, 1) == 1, asInt(res, 2) == 1, acct.UserID, acct.TokenID); err != nil {
				return fmt.Errorf("reserve %s: %w", reqID, err)
			}
			if err := r.ensureWindows(ctx, asString(res, 3)); err != nil {
				return fmt.Errorf("reserve %s: %w", reqID, err)
			}
		default:
			return fmt.Errorf("reserve %s: unexpected script result %v", reqID, res)
		}
	}
	return fmt.Errorf("reserve %s: accounts kept being unloaded", reqID)
}

// Settle implements Ledger.
func (r *Redis) Settle(ctx context.Context, reqID string, actual int64) (Settlement, error) {
	if err := validateSettle(reqID, actual); err != nil {
		return Settlement{}, err
	}
	keys := []string{r.prefix + "hold:" + reqID}
	for range maxLoadRounds {
		res, err := r.run(ctx, settleScript, keys,
			r.prefix, reqID, actual, r.nowMS(), r.cfg.settledTTL.Milliseconds(), r.cfg.sweepLimit,
		)
		if err != nil {
			return Settlement{}, fmt.Errorf("settle %s: %w", reqID, err)
		}
		switch code := asInt(res, 0); code {
		case 0, 1:
			s, err := parseSettlement(asString(res, 1))
			if err != nil {
				return Settlement{}, fmt.Errorf("settle %s: %w", reqID, err)
			}
			s.Duplicate = code == 1
			return s, nil
		case -3:
			return Settlement{}, fmt.Errorf("settle %s: %w", reqID, ErrNoHold)
		case -2:
			uid, _ := strconv.ParseInt(asString(res, 3), 10, 64)
			tid, _ := strconv.ParseInt(asString(res, 4), 10, 64)
			if err := r.ensureNeeded(ctx, asInt(res, 1) == 1, asInt(res, 2) == 1, uid, tid); err != nil {
				return Settlement{}, fmt.Errorf("settle %s: %w", reqID, err)
			}
			if err := r.ensureWindows(ctx, asString(res, 5)); err != nil {
				return Settlement{}, fmt.Errorf("settle %s: %w", reqID, err)
			}
		default:
			return Settlement{}, fmt.Errorf("settle %s: unexpected script result %v", reqID, res)
		}
	}
	return Settlement{}, fmt.Errorf("settle %s: accounts kept being unloaded", reqID)
}

// Release implements Ledger.
func (r *Redis) Release(ctx context.Context, reqID string) error {
	if err := releaseScript.Run(ctx, r.rdb, []string{r.prefix + "hold:" + reqID}, r.prefix, reqID).Err(); err != nil {
		return fmt.Errorf("release %s: %w", reqID, err)
	}
	return nil
}

// UserBalance implements Ledger.
func (r *Redis) UserBalance(ctx context.Context, userID int64) (int64, error) {
	v, err := r.live(ctx, "u", userID)
	if err != nil {
		return 0, fmt.Errorf("user balance %d: %w", userID, err)
	}
	return v, nil
}

// TokenRemain implements Ledger.
func (r *Redis) TokenRemain(ctx context.Context, tokenID int64) (int64, error) {
	v, err := r.live(ctx, "t", tokenID)
	if err != nil {
		return 0, fmt.Errorf("token remain %d: %w", tokenID, err)
	}
	return v, nil
}

func (r *Redis) live(ctx context.Context, kind string, id int64) (int64, error) {
	key := r.acctKey(kind, id)
	for range maxLoadRounds {
		res, err := liveScript.Run(ctx, r.rdb, []string{key}, r.prefix, kind, id, r.nowMS(), r.cfg.sweepLimit).Slice()
		if err != nil {
			return 0, err
		}
		if asInt(res, 0) == 0 {
			return asInt(res, 1), nil
		}
		if err := r.ensure(ctx, kind, id); err != nil {
			return 0, err
		}
	}
	return 0, errors.New("account kept being unloaded")
}

// AdjustUser implements Ledger.
func (r *Redis) AdjustUser(ctx context.Context, userID, delta int64) error {
	if err := adjustScript.Run(ctx, r.rdb, []string{r.acctKey("u", userID)}, delta).Err(); err != nil {
		return fmt.Errorf("adjust user %d: %w", userID, err)
	}
	return nil
}

// SetToken implements Ledger.
func (r *Redis) SetToken(ctx context.Context, tokenID int64, remain int64) error {
	key := r.acctKey("t", tokenID)
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "bal", remain)
		p.HIncrBy(ctx, key, "ver", 1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("set token %d: %w", tokenID, err)
	}
	return nil
}

// Forget implements Ledger. Only bal is dropped: held and the hold index stay, so outstanding holds still
// count after the reload.
func (r *Redis) Forget(ctx context.Context, userID, tokenID int64) error {
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, a := range []struct {
			kind string
			id   int64
		}{{"u", userID}, {"t", tokenID}} {
			if a.id == 0 {
				continue
			}
			key := r.acctKey(a.kind, a.id)
			p.HDel(ctx, key, "bal")
			p.HIncrBy(ctx, key, "ver", 1)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("forget user %d token %d: %w", userID, tokenID, err)
	}
	return nil
}

// WindowSpent implements Ledger.
func (r *Redis) WindowSpent(ctx context.Context, tokenID int64, w Window) (int64, bool, error) {
	v, err := r.rdb.HGet(ctx, r.prefix+"win:"+winSuffix(tokenID, w), "bal").Int64()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("window spent %d: %w", tokenID, err)
	}
	return v, true, nil
}

// ResetWindows implements Ledger.
func (r *Redis) ResetWindows(ctx context.Context, tokenID int64, ws ...Window) error {
	for _, w := range ws {
		if err := resetScript.Run(ctx, r.rdb, []string{r.prefix + "win:" + winSuffix(tokenID, w)}).Err(); err != nil {
			return fmt.Errorf("reset window %d: %w", tokenID, err)
		}
	}
	return nil
}

func asInt(res []any, i int) int64 {
	if i >= len(res) {
		return 0
	}
	switch v := res[i].(type) {
	case int64:
		return v
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

func asString(res []any, i int) string {
	if i >= len(res) {
		return ""
	}
	switch v := res[i].(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

func parseSettlement(s string) (Settlement, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return Settlement{}, fmt.Errorf("malformed settlement %q", s)
	}
	var n [3]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return Settlement{}, fmt.Errorf("malformed settlement %q: %w", s, err)
		}
		n[i] = v
	}
	return Settlement{Held: n[0], Charged: n[1], Shortfall: n[2]}, nil
}
