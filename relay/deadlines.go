package relay

import (
	"errors"
	"net/http"
	"time"

	"tollgate/service/setting"
)

// deadlines are a request's time budgets across all of its attempts (a zero time: no budget). Each attempt's
// own timeouts (the channel's, or the defaults) are capped by what is left, so retries never stretch a
// caller's wait past them: three attempts with 5-minute first-byte timeouts wait at most first_byte_budget.
type deadlines struct {
	end       time.Time // request_deadline: the whole request, attempts and answer included
	firstByte time.Time // first_byte_budget: until an upstream answers (response headers), across attempts
}

// newDeadlines starts a request's budgets; a group's own deadline (groupS > 0 seconds) shortens the
// request deadline, never lengthens it.
func newDeadlines(start time.Time, s *setting.Settings, groupS int) deadlines {
	end := time.Duration(s.RequestDeadline) * time.Second
	if g := time.Duration(groupS) * time.Second; g > 0 && (end <= 0 || g < end) {
		end = g
	}
	return deadlines{end: start.Add(end), firstByte: start.Add(time.Duration(s.FirstByteBudget) * time.Second)}
}

// capEnd caps d, an attempt's total timeout from now, by the request deadline; the error names what fires.
func (l deadlines) capEnd(now time.Time, d time.Duration, own error) (time.Duration, error) {
	return capBy(l.end, now, d, own, errRequestDeadline)
}

// capFirstByte caps d, an attempt's first-byte timeout from now, by the first-byte budget and the deadline.
func (l deadlines) capFirstByte(now time.Time, d time.Duration, own error) (time.Duration, error) {
	d, cause := capBy(l.firstByte, now, d, own, errFirstByteBudget)
	return capBy(l.end, now, d, cause, errRequestDeadline)
}

func capBy(limit, now time.Time, d time.Duration, own, budget error) (time.Duration, error) {
	if !limit.IsZero() {
		if left := limit.Sub(now); left < d {
			return max(left, 0), budget
		}
	}
	return d, own
}

// expired is the budget that is used up at now (nil: time is left for another attempt).
func (l deadlines) expired(now time.Time) error {
	switch {
	case !l.end.IsZero() && !now.Before(l.end):
		return errRequestDeadline
	case !l.firstByte.IsZero() && !now.Before(l.firstByte):
		return errFirstByteBudget
	}
	return nil
}

// cutByBudget says an attempt was ended by the request's budget rather than by one of the channel's own
// timeouts: the channel is not blamed for it (neutral for its breaker), and no further attempt has time.
func cutByBudget(err error) bool {
	return errors.Is(err, errRequestDeadline) || errors.Is(err, errFirstByteBudget)
}

// budgetFailure is the 504 the caller gets when a budget ran out before anything reached it.
func budgetFailure(cause error) *failure {
	code := "request_deadline"
	if errors.Is(cause, errFirstByteBudget) {
		code = "first_byte_deadline"
	}
	return &failure{class: ClassTimeout, err: cause, local: newErr(http.StatusGatewayTimeout, code)}
}
