// Package ledger is the live money book on the relay hot path: prepaid holds and live balances in quota units
// (1,000,000 units = 1 USD), kept in process (Memory) or in Redis (Redis) so that no request waits on SQL.
//
// SQL stays the durable book. The ledger reads a balance from SQL once (through a Loader) the first time an
// account is touched and from then on tracks it live; the caller persists what Settle charged through its
// batched writer. Each account is tracked as a base (loaded value + adjustments - charges) and a held sum, so
// that dropping the base (Forget) never loses the outstanding holds and the live value is always base - held.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Account names whose money a request spends: the user's balance and, when the key is limited, the key's remaining quota.
type Account struct {
	UserID       int64
	TokenID      int64
	TokenLimited bool
	// Windows are the key's spend limits (daily, monthly budgets); nil when it has none.
	Windows []Window
}

// Loader reads durable balances from SQL the first time an account is touched (or after Forget).
type Loader interface {
	LoadUser(ctx context.Context, userID int64) (int64, error)
	LoadToken(ctx context.Context, tokenID int64) (int64, error)
	// LoadSpent is what a key was charged in [from, to) (Σ of its logged cost): a spend window's start.
	LoadSpent(ctx context.Context, tokenID int64, from, to time.Time) (int64, error)
}

// Settlement is what Settle did.
//
// Held is the amount that was reserved; Charged is what was actually taken from the live balances (the same
// amount from the user and, if limited, from the key); Shortfall is the part of the actual cost above the hold
// that could not be taken because a balance would have gone below zero. Charged + Shortfall == actual.
type Settlement struct {
	Held, Charged, Shortfall int64
	Duplicate                bool
}

// Ledger is the prepaid-then-settled money book shared by the relay and the account services.
type Ledger interface {
	// Reserve holds amount on both accounts atomically; errors.Is(err, ErrInsufficientUser) /
	// ErrInsufficientToken when short, ErrDuplicateHold if reqID is already held or settled.
	Reserve(ctx context.Context, reqID string, acct Account, amount int64) error
	// Settle releases the hold of reqID and charges actual; idempotent per reqID (a repeat returns the first
	// result with Duplicate=true); the part of actual above the hold is taken only up to what both accounts
	// have, the rest is reported as Shortfall; ErrNoHold if reqID was never reserved (or was released).
	Settle(ctx context.Context, reqID string, actual int64) (Settlement, error)
	// Release undoes a hold (failure before any upstream usage); idempotent, unknown reqIDs are a no-op.
	Release(ctx context.Context, reqID string) error
	// UserBalance is the live balance: loaded - spent - held.
	UserBalance(ctx context.Context, userID int64) (int64, error)
	// TokenRemain is the live remaining quota of a limited key: loaded - spent - held.
	TokenRemain(ctx context.Context, tokenID int64) (int64, error)
	// AdjustUser applies an admin top-up/deduct after the SQL write; a no-op if not loaded (the next load reads SQL).
	AdjustUser(ctx context.Context, userID, delta int64) error
	// SetToken records that the owner set the key's remaining quota; outstanding holds still count against it.
	SetToken(ctx context.Context, tokenID int64, remain int64) error
	// Forget drops live balances (0 = skip) so the next touch reloads from SQL; outstanding holds are kept.
	Forget(ctx context.Context, userID, tokenID int64) error
	// WindowSpent is what a key's spend window has charged so far (holds not counted); loaded is false when
	// the window is not live (nothing touched it yet), and the caller reads SQL instead.
	WindowSpent(ctx context.Context, tokenID int64, w Window) (spent int64, loaded bool, err error)
	// ResetWindows drops the live spent of a key's windows so the next touch reloads it from SQL: a budget
	// switched on after a time without one, when nothing kept the window live. Outstanding holds are kept.
	ResetWindows(ctx context.Context, tokenID int64, ws ...Window) error
}

// ErrInsufficient is wrapped by both shortage errors, for callers that only need "refuse: no money".
var ErrInsufficient = errors.New("insufficient quota")

// Sentinel errors callers branch on with errors.Is. They are never reassigned.
var (
	// ErrInsufficientUser means the user's balance cannot cover the hold.
	ErrInsufficientUser = fmt.Errorf("user balance: %w", ErrInsufficient)
	// ErrInsufficientToken means the limited key's remaining quota cannot cover the hold.
	ErrInsufficientToken = fmt.Errorf("token quota: %w", ErrInsufficient)
	// ErrDuplicateHold means reqID already has a hold or a settlement.
	ErrDuplicateHold = errors.New("request already reserved")
	// ErrNoHold means Settle found neither a hold nor a settlement for reqID.
	ErrNoHold = errors.New("no hold for request")
	// ErrInvalid means an argument was out of range (negative amount, empty request id, zero user id).
	ErrInvalid = errors.New("invalid ledger argument")
)

// Defaults; each can be changed with an Option.
const (
	// DefaultHoldTTL bounds how long a hold lives if its request never settles or releases (crash, bug).
	DefaultHoldTTL = 2 * time.Hour
	// DefaultSettledTTL is how long a settlement is remembered to answer duplicate Settle calls.
	DefaultSettledTTL = 24 * time.Hour
	// DefaultSettledMax bounds the settlements Memory remembers, so memory stays flat under any load.
	DefaultSettledMax = 1 << 18
)

type config struct {
	now        func() time.Time
	holdTTL    time.Duration
	settledTTL time.Duration
	settledMax int
	sweepLimit int
}

func newConfig(opts []Option) config {
	c := config{
		now:        time.Now,
		holdTTL:    DefaultHoldTTL,
		settledTTL: DefaultSettledTTL,
		settledMax: DefaultSettledMax,
		sweepLimit: 64,
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Option tunes a ledger; the defaults suit production.
type Option func(*config)

// WithClock injects the time source, so tests can expire holds without sleeping.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithHoldTTL sets how long an unsettled hold lives before its money is returned.
func WithHoldTTL(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.holdTTL = d
		}
	}
}

// WithSettledTTL sets how long settlements are remembered for idempotency.
func WithSettledTTL(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.settledTTL = d
		}
	}
}

// WithSettledMax bounds how many settlements Memory remembers (Redis relies on the TTL alone).
func WithSettledMax(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.settledMax = n
		}
	}
}

func validateReserve(reqID string, acct Account, amount int64) error {
	switch {
	case reqID == "":
		return fmt.Errorf("reserve: empty request id: %w", ErrInvalid)
	case amount < 0:
		return fmt.Errorf("reserve %s: negative amount %d: %w", reqID, amount, ErrInvalid)
	case acct.UserID <= 0:
		return fmt.Errorf("reserve %s: user id %d: %w", reqID, acct.UserID, ErrInvalid)
	case acct.TokenLimited && acct.TokenID <= 0:
		return fmt.Errorf("reserve %s: limited token id %d: %w", reqID, acct.TokenID, ErrInvalid)
	case len(acct.Windows) > 0 && acct.TokenID <= 0:
		return fmt.Errorf("reserve %s: windows without a token id: %w", reqID, ErrInvalid)
	}
	for _, w := range acct.Windows {
		if w.Limit < 0 || !w.End.After(w.Start) {
			return fmt.Errorf("reserve %s: window %v: %w", reqID, w, ErrInvalid)
		}
	}
	return nil
}

// roomOf is what a window can still take: its limit less what it charged and what it holds.
func roomOf(limit, spent, held int64) int64 { return limit - spent - held }

func validateSettle(reqID string, actual int64) error {
	switch {
	case reqID == "":
		return fmt.Errorf("settle: empty request id: %w", ErrInvalid)
	case actual < 0:
		return fmt.Errorf("settle %s: negative amount %d: %w", reqID, actual, ErrInvalid)
	}
	return nil
}

// settleMath splits an actual cost into what is charged and what is short. The hold is always chargeable in
// full (it was already taken out of the live balances); the extra above it is taken only up to what is
// available now, outside this hold, on both accounts, so a settlement never pushes a balance below zero.
// availToken is ignored when limited is false.
func settleMath(held, actual, availUser, availToken int64, limited bool) (charged, shortfall int64) {
	if actual <= held {
		return actual, 0
	}
	extra := actual - held
	room := max(availUser, 0)
	if limited {
		room = min(room, max(availToken, 0))
	}
	take := min(extra, room)
	return held + take, extra - take
}
