// Package alert tells people when something breaks: a channel's breaker opened, a channel was switched off or
// came back, an upstream key was refused, a model's error rate is above the threshold, a user's balance fell
// below the user's own threshold, and once a day a summary for admins. Alerts go out as signed webhooks and as
// e-mail over SMTP. One alert per event key per cooldown, whichever node saw the event first (cache SetNX),
// never one per request. The hooks (OnTransition, Finished, KeyDisabled, ChannelAutoDisabled) only queue:
// cache, SQL and network work happens on the service's own goroutines, off the relay's path.
package alert

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"tollgate/model"
	"tollgate/service/cache"
	"tollgate/service/health"
	"tollgate/service/setting"
)

// Delivery channels, as written in alert_logs.channel.
const (
	ChannelWebhook = "webhook"
	ChannelEmail   = "email"
)

// Balances reads live balances (the ledger).
type Balances interface {
	UserBalance(ctx context.Context, userID int64) (int64, error)
}

// Deps are what the service uses.
type Deps struct {
	Store    *model.Store
	Cache    cache.Cache
	Settings *setting.Service
	Balances Balances
	// ChannelName names a channel for the message (nil or "" : "#id").
	ChannelName func(id int64) string
	// Client sends webhooks (nil: a client with a 10 s timeout that follows no redirects).
	Client *http.Client
	// Now is the time (nil: time.Now).
	Now func() time.Time
}

// Options tune timings; the zero value suits production.
type Options struct {
	Backoff     time.Duration // first webhook retry delay, doubled each retry (default 1 s)
	Retries     int           // webhook retries after the first attempt (default 3)
	CheckEvery  time.Duration // how often error rates and the daily summary are checked (default 10 s)
	Queue       int           // events queued before new ones are dropped (default 1024)
	MailTimeout time.Duration // one SMTP conversation (default 30 s)
	LowStateTTL time.Duration // how long "below the threshold, already told" is remembered (default 30 days)
	HookTimeout time.Duration // one webhook attempt (default 10 s)
}

func (o *Options) defaults() {
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.Retries <= 0 {
		o.Retries = 3
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = 10 * time.Second
	}
	if o.Queue <= 0 {
		o.Queue = 1024
	}
	if o.MailTimeout <= 0 {
		o.MailTimeout = 30 * time.Second
	}
	if o.LowStateTTL <= 0 {
		o.LowStateTTL = 30 * 24 * time.Hour
	}
	if o.HookTimeout <= 0 {
		o.HookTimeout = 10 * time.Second
	}
}

// Event is one thing worth telling.
type Event struct {
	Name string         `json:"event"` // setting.Event*
	Key  string         `json:"key"`   // what the cooldown is per: "channel:3", "model:gpt-4o", "user:7"
	At   time.Time      `json:"created_at"`
	Data map[string]any `json:"data"`

	// For balance.low: the user's own address and language.
	email, lang string
	// force skips the cooldown (test sends).
	force bool
}

// Service sends alerts.
type Service struct {
	d   Deps
	opt Options

	events chan Event
	balQ   chan *model.User

	balMu      sync.Mutex
	balPending map[int64]bool
	above      sync.Map // user id → true once this node saw the balance at or above the threshold

	rates errorRates

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New builds the service; Start runs its workers.
func New(d Deps, opt Options) *Service {
	opt.defaults()
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Client == nil {
		d.Client = &http.Client{Timeout: opt.HookTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	s := &Service{d: d, opt: opt, events: make(chan Event, opt.Queue), balQ: make(chan *model.User, opt.Queue),
		balPending: map[int64]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start runs the workers until Close.
func (s *Service) Start() {
	s.wg.Add(3)
	go s.dispatch()
	go s.balanceWorker()
	go s.ticker()
}

// Close stops the workers and waits for deliveries in flight (or ctx).
func (s *Service) Close(ctx context.Context) error {
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Emit queues an event; it never blocks (a full queue drops the event with a warning).
func (s *Service) Emit(ev Event) {
	if ev.At.IsZero() {
		ev.At = s.d.Now().UTC()
	}
	select {
	case s.events <- ev:
	default:
		slog.Warn("alert queue full: event dropped", "event", ev.Name, "key", ev.Key)
	}
}

func (s *Service) channelName(id int64) string {
	if s.d.ChannelName != nil {
		if n := s.d.ChannelName(id); n != "" {
			return n
		}
	}
	return "#" + strconv.FormatInt(id, 10)
}

// OnTransition is the health.Tracker hook: a channel breaker (key -1) that opens, or closes after being open.
func (s *Service) OnTransition(channelID int64, key int, from, to health.State) {
	if key >= 0 || from == to {
		return
	}
	data := map[string]any{"channel_id": channelID, "channel": s.channelName(channelID), "from": string(from), "to": string(to)}
	switch {
	case to == health.StateOpen:
		s.Emit(Event{Name: setting.EventChannelOpened, Key: fmt.Sprintf("channel:%d", channelID), Data: data})
	case to == health.StateClosed && (from == health.StateOpen || from == health.StateHalfOpen):
		s.Emit(Event{Name: setting.EventChannelRecovered, Key: fmt.Sprintf("channel:%d", channelID), Data: data})
	}
}

// KeyDisabled implements relay.AlertSink.
func (s *Service) KeyDisabled(channelID int64, channelName string, key int, class string) {
	s.Emit(Event{Name: setting.EventKeyDisabled, Key: fmt.Sprintf("channel:%d:key:%d", channelID, key),
		Data: map[string]any{"channel_id": channelID, "channel": channelName, "key_index": key, "class": class}})
}

// ChannelAutoDisabled implements relay.AlertSink.
func (s *Service) ChannelAutoDisabled(channelID int64, channelName string) {
	s.Emit(Event{Name: setting.EventChannelAutoDisabled, Key: fmt.Sprintf("channel:%d", channelID),
		Data: map[string]any{"channel_id": channelID, "channel": channelName}})
}

// Finished implements relay.AlertSink: counts the model's error rate, and queues a balance check for a user
// with a threshold who was charged (coalesced: one check in flight per user).
func (s *Service) Finished(u *model.User, modelName string, failed bool, charged int64) {
	if modelName != "" {
		s.rates.add(s.d.Now(), modelName, failed, s.d.Settings.Get().Alerts.ErrorRate.WindowS)
	}
	if u == nil || u.BalanceAlert <= 0 || charged <= 0 {
		return
	}
	s.balMu.Lock()
	if s.balPending[u.ID] {
		s.balMu.Unlock()
		return
	}
	s.balPending[u.ID] = true
	s.balMu.Unlock()
	select {
	case s.balQ <- u:
	default:
		s.balMu.Lock()
		delete(s.balPending, u.ID)
		s.balMu.Unlock()
	}
}

func (s *Service) balanceWorker() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case u := <-s.balQ:
			s.balMu.Lock()
			delete(s.balPending, u.ID)
			s.balMu.Unlock()
			s.checkBalance(u)
		}
	}
}

func lowKey(userID int64) string { return "alert:low:" + strconv.FormatInt(userID, 10) }

// checkBalance reads the live balance (the ledger's cache, not SQL) and tells the user once when it is below
// their threshold; a balance back at or above the threshold re-arms the alert.
func (s *Service) checkBalance(u *model.User) {
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	bal, err := s.d.Balances.UserBalance(ctx, u.ID)
	if err != nil {
		slog.Warn("alert: balance check", "user", u.ID, "err", err)
		return
	}
	if bal >= u.BalanceAlert {
		if _, seen := s.above.Load(u.ID); !seen {
			_ = s.d.Cache.Del(ctx, lowKey(u.ID))
			s.above.Store(u.ID, true)
		}
		return
	}
	s.above.Delete(u.ID)
	first, err := s.d.Cache.SetNX(ctx, lowKey(u.ID), []byte(strconv.FormatInt(bal, 10)), s.opt.LowStateTTL)
	if err != nil || !first {
		return // already told (on this or another node), or the cache is down: never one per request
	}
	s.Emit(Event{Name: setting.EventBalanceLow, Key: "user:" + strconv.FormatInt(u.ID, 10),
		Data:  map[string]any{"user_id": u.ID, "username": u.Username, "balance": bal, "threshold": u.BalanceAlert},
		email: u.Email, lang: u.Language})
}

func (s *Service) dispatch() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case ev := <-s.events:
			s.handle(ev)
		}
	}
}

func cooldownKey(ev Event) string { return "alert:cd:" + ev.Name + ":" + ev.Key }

// handle takes the event's cooldown slot (shared by all nodes) and starts one delivery per target.
func (s *Service) handle(ev Event) {
	st := s.d.Settings.Get().Alerts
	if !ev.force {
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		ok, err := s.d.Cache.SetNX(ctx, cooldownKey(ev), []byte("1"), time.Duration(st.CooldownS)*time.Second)
		cancel()
		if err != nil {
			slog.Warn("alert: cooldown check failed, event dropped", "event", ev.Name, "key", ev.Key, "err", err)
			return
		}
		if !ok {
			return
		}
	}
	for _, t := range s.targets(&st, ev) {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.record(ev, t, t.send(s, ev))
		}()
	}
}

// target is one place an event goes to.
type target struct {
	channel string
	addr    string // URL or e-mail address
	lang    string
	hook    setting.Webhook
	smtp    setting.SMTP
}

func (t target) send(s *Service, ev Event) result {
	if t.channel == ChannelWebhook {
		return s.sendWebhook(s.ctx, t.hook, ev)
	}
	return s.sendMail(s.ctx, t.smtp, t.addr, t.lang, ev)
}

// targets lists where ev goes: every webhook subscribed to it (no events listed = all), and e-mail to the
// user for balance.low, to smtp.admin_to for everything else.
func (s *Service) targets(st *setting.Alerts, ev Event) []target {
	var out []target
	for _, w := range st.Webhooks {
		if subscribed(w.Events, ev.Name) {
			out = append(out, target{channel: ChannelWebhook, addr: w.URL, hook: w})
		}
	}
	if !st.SMTP.Enabled() {
		return out
	}
	if ev.Name == setting.EventBalanceLow {
		if ev.email != "" {
			out = append(out, target{channel: ChannelEmail, addr: ev.email, lang: ev.lang, smtp: st.SMTP})
		}
		return out
	}
	for _, to := range st.SMTP.AdminTo {
		out = append(out, target{channel: ChannelEmail, addr: to, lang: "en", smtp: st.SMTP})
	}
	return out
}

func subscribed(events []string, name string) bool {
	if len(events) == 0 || name == setting.EventTest {
		return true
	}
	for _, e := range events {
		if e == name {
			return true
		}
	}
	return false
}

// result is how one delivery ended.
type result struct {
	attempts int
	err      error
	subject  string
}

// record writes the delivery's alert_logs row.
func (s *Service) record(ev Event, t target, r result) model.AlertLog {
	row := model.AlertLog{Event: ev.Name, EventKey: clip(ev.Key, 191), Target: clip(redactQuery(t.addr), 512), Channel: t.channel,
		Status: model.AlertSent, Attempts: r.attempts, Subject: clip(r.subject, 255), CreatedAt: s.d.Now().UTC()}
	if r.err != nil {
		row.Status, row.Error = model.AlertFailed, clip(r.err.Error(), 500)
		slog.Warn("alert not delivered", "event", ev.Name, "key", ev.Key, "channel", t.channel, "attempts", r.attempts, "err", r.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.d.Store.CreateAlertLog(ctx, &row); err != nil {
		slog.Error("alert log row", "event", ev.Name, "err", err)
	}
	return row
}

// redactQuery hides a webhook URL's query string, which often carries a token, from the alert log.
func redactQuery(addr string) string {
	if i := strings.IndexByte(addr, '?'); i >= 0 {
		return addr[:i] + "?…"
	}
	return addr
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
