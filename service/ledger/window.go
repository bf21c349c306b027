package ledger

import (
	"fmt"
	"time"
)

// Window is a spend limit of the request's key over a calendar period: at most Limit units may be charged to
// the key between Start (inclusive) and End (exclusive). It is tracked like an account whose room is
// Limit − spent − held; spent is read from SQL (Loader.LoadSpent) the first time the period is touched and
// kept live from then on. Windows are checked and charged in the same atomic step as the balances, so a
// budget holds under any concurrency. The limit travels with each request (the key's current setting); a
// hold keeps the limit it was reserved under.
type Window struct {
	Start, End time.Time
	Limit      int64
}

// DayWindow is the UTC day around at with limit units.
func DayWindow(at time.Time, limit int64) Window {
	at = at.UTC()
	s := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	return Window{Start: s, End: s.AddDate(0, 0, 1), Limit: limit}
}

// MonthWindow is the UTC calendar month around at with limit units.
func MonthWindow(at time.Time, limit int64) Window {
	at = at.UTC()
	s := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	return Window{Start: s, End: s.AddDate(0, 1, 0), Limit: limit}
}

// Budgets are a key's spend windows at time at: the day's and the month's where their limit is set, nil when
// neither is (so a key without a budget costs the ledger nothing extra).
func Budgets(at time.Time, daily, monthly int64) []Window {
	if daily <= 0 && monthly <= 0 {
		return nil
	}
	ws := make([]Window, 0, 2)
	if daily > 0 {
		ws = append(ws, DayWindow(at, daily))
	}
	if monthly > 0 {
		ws = append(ws, MonthWindow(at, monthly))
	}
	return ws
}

// winKey names a window's counter: the key and the period (unix seconds).
type winKey struct {
	token      int64
	start, end int64
}

func keyOf(tokenID int64, w Window) winKey {
	return winKey{token: tokenID, start: w.Start.Unix(), end: w.End.Unix()}
}

// ErrBudgetExhausted means a spend window of the key cannot cover the hold. It is a refusal for lack of
// money (it wraps ErrInsufficient); errors.As with *BudgetError says which window and when it ends.
var ErrBudgetExhausted = fmt.Errorf("key budget: %w", ErrInsufficient)

// BudgetError is the refusal of a spend window; it matches ErrBudgetExhausted (and so ErrInsufficient).
type BudgetError struct{ Window Window }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("key budget of %d units until %s exhausted", e.Window.Limit, e.Window.End.Format(time.RFC3339))
}

// Unwrap implements errors.Unwrap.
func (e *BudgetError) Unwrap() error { return ErrBudgetExhausted }
