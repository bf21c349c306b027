package account

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tollgate/service/apperr"
	"tollgate/service/netkey"
)

// Sign-in throttling. Two guards, both counted in the cache (shared by every node on Redis):
//
//   - Per IP: more than loginMaxPerIP failures in loginWindow refuse every sign-in from that IP (429
//     too_many_attempts) until the window ends. This stops one address from spraying many usernames.
//   - Per username: failures are counted per (case-folded) username for loginUserWindow, from any IP. After
//     loginFreeFailures of them, each further failure imposes a growing delay (1 s, 2 s, 4 s … capped at
//     loginDelayCap) on that username *from the IP that failed*. While a delay is pending, a sign-in for that
//     username from that IP is refused at once with 429 login_delayed and Retry-After, before any password
//     check. The owner signing in from another address is never held, and even from the same address only
//     waits out the delay: nobody can lock anyone out, and a guesser is slowed to one try per delay.
//
// Nothing sleeps: a delayed attempt costs two cache reads and no bcrypt, so a flood of attempts holds no
// goroutines and no CPU; every cache key expires by itself (delays within loginDelayCap, counters within
// their window). Unknown usernames are throttled exactly like real ones, so the answers reveal nothing.
const (
	loginWindow       = 5 * time.Minute
	loginMaxPerIP     = 30
	loginUserWindow   = 15 * time.Minute
	loginFreeFailures = 3
	loginDelayCap     = 30 * time.Second
)

// loginDelay is the wait imposed after the n-th failure for one username.
func loginDelay(n int64) time.Duration {
	if n <= loginFreeFailures {
		return 0
	}
	shift := n - loginFreeFailures - 1
	if shift >= 5 { // 1 s << 5 = 32 s > cap
		return loginDelayCap
	}
	return min(time.Second<<shift, loginDelayCap)
}

type loginKeys struct{ ip, user, wait string }

// maxLoginName bounds the username inside cache keys: no account has a longer name (usernames are 3-32
// characters), and a sign-in body holding a megabyte "username" must not become megabyte cache keys.
const maxLoginName = 64

func keysFor(username, ip string) loginKeys {
	if len(username) > maxLoginName {
		username = username[:maxLoginName]
	}
	name := strings.ToLower(username)
	ip = netkey.Of(ip)
	return loginKeys{ip: "login:ip:" + ip, user: "login:user:" + name, wait: "login:wait:" + name + "|" + ip}
}

// admit refuses a sign-in before the password is checked: too many failures from the IP, or a pending delay
// for this username from this IP.
func (s *Service) admit(ctx context.Context, k loginKeys) error {
	n, err := s.cache.Incr(ctx, k.ip, 0, loginWindow)
	if err != nil {
		return fmt.Errorf("login limit: %w", err)
	}
	if n >= loginMaxPerIP {
		e := apperr.New(http.StatusTooManyRequests, "too_many_attempts", int(loginWindow.Seconds()))
		e.RetryAfter = int(loginWindow.Seconds())
		return e
	}
	return s.pendingDelay(ctx, k.wait, "login_delayed")
}

// pendingDelay is a 429 with code and Retry-After while the delay stored under key (a Unix millisecond
// deadline, shared by every node) has not passed; nil once it has or when there is none.
func (s *Service) pendingDelay(ctx context.Context, key, code string) error {
	v, ok, err := s.cache.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("%s: %w", code, err)
	}
	if !ok {
		return nil
	}
	until, _ := strconv.ParseInt(string(v), 10, 64)
	left := time.UnixMilli(until).Sub(s.opt.Now())
	if left <= 0 {
		return nil
	}
	secs := int((left + time.Second - 1) / time.Second)
	e := apperr.New(http.StatusTooManyRequests, code, secs)
	e.RetryAfter = secs
	return e
}

// failed counts a failed sign-in and sets the delay the username's failure count calls for.
func (s *Service) failed(ctx context.Context, k loginKeys) {
	_, _ = s.cache.Incr(ctx, k.ip, 1, loginWindow)
	n, err := s.cache.Incr(ctx, k.user, 1, loginUserWindow)
	if err != nil {
		return
	}
	if d := loginDelay(n); d > 0 {
		until := s.opt.Now().Add(d).UnixMilli()
		_ = s.cache.Set(ctx, k.wait, []byte(strconv.FormatInt(until, 10)), d)
	}
}

// succeeded forgets the username's failures (the owner got in).
func (s *Service) succeeded(ctx context.Context, k loginKeys) {
	_ = s.cache.Del(ctx, k.user, k.wait)
}
