package relay_test

// The books with every credit source: users are credited through each way a balance can grow (and an admin's
// deduction), before and while they spend through the relay, and for each user Σ credits − Σ logged cost =
// balance, in SQL and in the live ledger, with each source's credits adding up to what it gave.
//
// To cover a new credit source (e.g. redemption codes), add a creditStep to creditSteps (once, before the
// spending) or to creditStepsWhileSpending (repeated while the relay calls run): the checks need nothing else.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"tollgate/model"
	"tollgate/service/payment/epay/epaytest"
)

// creditBooks is the world of the credit books test: its users by name and what each source should have
// credited each of them.
type creditBooks struct {
	*world
	users map[string]*person
	want  map[int64]map[string]int64 // user id → credit source → Σ units it should have credited
	mu    sync.Mutex
	epay  *epaytest.Gateway // the fake Epay gateway top-ups are paid through (CNY at 7.3)
}

// gained records that source credited units to user (negative: taken back).
func (b *creditBooks) gained(userID int64, source string, units int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.want[userID] == nil {
		b.want[userID] = map[string]int64{}
	}
	b.want[userID][source] += units
}

// signUp registers name through the API (with an invite code when code is not empty) and signs in.
func (b *creditBooks) signUp(name, code string) *person {
	b.t.Helper()
	body := map[string]string{"username": name, "password": "relay-Passw0rd-9"}
	if code != "" {
		body["aff_code"] = code
	}
	r := b.node.Anon(b.t).Do("POST", "/api/auth/register", body)
	if r.Status != http.StatusCreated {
		b.t.Fatalf("register %s: %d %s", name, r.Status, r.Body)
	}
	var out struct {
		User struct {
			ID int64 `json:"id"`
		} `json:"user"`
	}
	r.JSON(b.t, &out)
	p := &person{name: name, id: out.User.ID, c: b.node.Login(b.t, name, "relay-Passw0rd-9")}
	b.users[name] = p
	return p
}

// adjust is an admin's balance adjustment through the API; it returns the answer's status (an error is the
// caller's to judge: a goroutine must not fail the test).
func (b *creditBooks) adjust(p *person, delta int64) int {
	r := b.root.Do("POST", fmt.Sprintf("/api/admin/users/%d/quota", p.id), map[string]any{"delta": delta, "reason": "books"})
	if r.Status == http.StatusOK {
		b.gained(p.id, model.CreditAdmin, delta)
	}
	return r.Status
}

// topUp pays an Epay top-up of amount CNY for p through the API and the gateway's signed notify, and returns
// the units the order credited (an error is the caller's to judge).
func (b *creditBooks) topUp(p *person, amount string) (int64, error) {
	r := p.c.Do("POST", "/api/user/topup", map[string]any{"provider": "epay", "method": "alipay", "amount": amount})
	if r.Status != http.StatusCreated {
		return 0, fmt.Errorf("top-up %s for %s: %d %s", amount, p.name, r.Status, r.Body)
	}
	var o struct {
		OrderNo string `json:"order_no"`
		Quota   int64  `json:"quota"`
	}
	if err := json.Unmarshal(r.Body, &o); err != nil {
		return 0, err
	}
	status, body, err := epaytest.Post(b.node.URL+"/api/payment/epay/notify", b.epay.PaidParams(o.OrderNo, amount, "alipay"))
	if err != nil || status != http.StatusOK || body != "success" {
		return 0, fmt.Errorf("notify %s: %d %s %v", o.OrderNo, status, body, err)
	}
	b.gained(p.id, model.CreditTopup, o.Quota)
	return o.Quota, nil
}

// redeemRace has an admin create a batch of one code worth quota units, which every named user then tries to
// redeem at once: exactly one of them must get it (200), the others 409 code_used.
func (b *creditBooks) redeemRace(quota int64, names ...string) error {
	r := b.root.Do("POST", "/api/admin/redemptions", map[string]any{"name": "books", "count": 1, "quota": quota})
	if r.Status != http.StatusCreated {
		return fmt.Errorf("create codes: %d %s", r.Status, r.Body)
	}
	var batch struct{ Codes []string }
	if err := json.Unmarshal(r.Body, &batch); err != nil {
		return err
	}
	var wg sync.WaitGroup
	status := make([]int, len(names))
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status[i] = b.users[name].c.Do("POST", "/api/user/redeem", map[string]any{"code": batch.Codes[0]}).Status
		}()
	}
	wg.Wait()
	won := 0
	for i, st := range status {
		switch st {
		case http.StatusOK:
			won++
			b.gained(b.users[names[i]].id, model.CreditRedeem, quota)
		case http.StatusConflict:
		default:
			return fmt.Errorf("redeem by %s: %d", names[i], st)
		}
	}
	if won != 1 {
		return fmt.Errorf("%d of %v redeemed one code", won, names)
	}
	return nil
}

// creditStep is one way money reaches users, driven through the public API as a customer or an admin would.
type creditStep struct {
	name string
	run  func(b *creditBooks) error
}

const (
	booksGift          = 2_000_000
	booksInviterReward = 1_500_000
	booksInviteeReward = 700_000
	booksEpayKey       = "books-epay-key-0123456789"
)

// creditSteps run once, in order, before anyone spends.
var creditSteps = []creditStep{
	{"new-user gift", func(b *creditBooks) error {
		ivy := b.signUp("ivy", "")
		b.gained(ivy.id, model.CreditSignup, booksGift)
		return nil
	}},
	{"invite rewards at sign-up", func(b *creditBooks) error {
		var mine struct {
			AffCode string `json:"aff_code"`
		}
		b.users["ivy"].c.Do("GET", "/api/user/invites", nil).JSON(b.t, &mine)
		ian := b.signUp("ian", mine.AffCode)
		b.gained(ian.id, model.CreditSignup, booksGift)
		b.gained(ian.id, model.CreditInvite, booksInviteeReward)
		b.gained(b.users["ivy"].id, model.CreditInvite, booksInviterReward)
		return nil
	}},
	{"admin adjustments up and down", func(b *creditBooks) error {
		for _, a := range []struct {
			name  string
			delta int64
		}{{"ivy", 3_000_000}, {"ivy", -400_000}, {"ian", 1_000_000}, {"ian", -150_000}} {
			if st := b.adjust(b.users[a.name], a.delta); st != http.StatusOK {
				return fmt.Errorf("adjust %s by %d: %d", a.name, a.delta, st)
			}
		}
		return nil
	}},
	{"paid top-ups, and the inviter's share of the invitee's first", func(b *creditBooks) error {
		units, err := b.topUp(b.users["ian"], "10.00")
		if err != nil {
			return err
		}
		if units != 1_369_863 { // 10.00 / 7.3 USD
			return fmt.Errorf("10.00 CNY credited %d units, want 1369863", units)
		}
		b.gained(b.users["ivy"].id, model.CreditInvite, 68_493) // 5 % of 1,369,863 = 68,493.15
		_, err = b.topUp(b.users["ivy"], "5.00")                // ivy was invited by nobody
		return err
	}},
	{"redemption codes, one raced for by both", func(b *creditBooks) error {
		if err := b.redeemRace(2_500_000, "ivy"); err != nil {
			return err
		}
		if err := b.redeemRace(1_250_000, "ian"); err != nil {
			return err
		}
		return b.redeemRace(900_000, "ivy", "ian", "ivy", "ian")
	}},
}

// creditStepsWhileSpending run repeatedly while the relay calls are in flight.
var creditStepsWhileSpending = []creditStep{
	{"admin adjustments during spending", func(b *creditBooks) error {
		for _, a := range []struct {
			name  string
			delta int64
		}{{"ivy", 50_000}, {"ian", -20_000}, {"ian", 35_000}, {"ivy", -10_000}} {
			if st := b.adjust(b.users[a.name], a.delta); st != http.StatusOK {
				return fmt.Errorf("adjust %s by %d: %d", a.name, a.delta, st)
			}
		}
		return nil
	}},
	{"top-ups during spending (not first: no invite share)", func(b *creditBooks) error {
		_, err := b.topUp(b.users["ian"], "1.00")
		return err
	}},
	{"redemption codes raced for during spending", func(b *creditBooks) error {
		return b.redeemRace(300_000, "ian", "ivy", "ian")
	}},
}

// check asserts the books of every user: per source, Σ credits in SQL is what the steps gave; Σ credits − Σ
// logged cost = balance in SQL and in the live ledger; used_quota = Σ logged cost.
func (b *creditBooks) check(rows []model.UsageLog) {
	b.t.Helper()
	ctx := context.Background()
	cost := map[int64]int64{}
	for _, l := range rows {
		cost[l.UserID] += l.Cost
	}
	for name, p := range b.users {
		var bySource []struct {
			Source string
			N      int64
		}
		if err := b.node.App.Store.DB.Model(&model.Credit{}).Select("source, SUM(units) AS n").Where("user_id = ?", p.id).
			Group("source").Scan(&bySource).Error; err != nil {
			b.t.Fatal(err)
		}
		got := map[string]int64{}
		for _, s := range bySource {
			got[s.Source] = s.N
		}
		for src, want := range b.want[p.id] {
			if got[src] != want {
				b.t.Errorf("%s: Σ %s credits = %d, want %d", name, src, got[src], want)
			}
		}
		for src, n := range got {
			if _, ok := b.want[p.id][src]; !ok {
				b.t.Errorf("%s: unexpected %s credits of %d", name, src, n)
			}
		}
		credits, err := b.node.App.Store.SumCredits(ctx, p.id)
		if err != nil {
			b.t.Fatal(err)
		}
		u := b.sqlUser(p.id)
		live := b.liveBalance(p.id)
		if credits-cost[p.id] != u.Quota || u.Quota != live || u.UsedQuota != cost[p.id] || cost[p.id] <= 0 {
			b.t.Fatalf("%s: Σ credits %d − Σ logged cost %d = %d, SQL balance %d, live %d, used_quota %d",
				name, credits, cost[p.id], credits-cost[p.id], u.Quota, live, u.UsedQuota)
		}
	}
}

func TestCreditBooks_EverySourceThenSpendAddsUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	oa, an := fake(t), fake(t)
	w.channel(openaiChannel(oa))
	w.channel(anthropicChannel(an))
	w.prices()
	gw := epaytest.New(t, "1001", booksEpayKey)
	r := w.root.Do("PUT", "/api/admin/settings", map[string]any{"new_user_quota": booksGift,
		"invite": map[string]any{"inviter_reward": booksInviterReward, "invitee_reward": booksInviteeReward, "first_topup_percent": "5"},
		"payment": map[string]any{"epay": map[string]any{"enabled": true, "gateway_url": gw.URL, "pid": "1001", "key": booksEpayKey,
			"methods": []string{"alipay"}, "currency": "CNY", "rate": "7.3", "min_amount": "1", "max_amount": "10000"}}})
	if r.Status != http.StatusOK {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	b := &creditBooks{world: w, users: map[string]*person{}, want: map[int64]map[string]int64{}, epay: gw}
	for _, s := range creditSteps {
		if err := s.run(b); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	// Nothing spent yet: the credits alone are the balances.
	for name, p := range b.users {
		var sum int64
		for _, v := range b.want[p.id] {
			sum += v
		}
		if got := w.liveBalance(p.id); got != sum || w.sqlUser(p.id).Quota != sum {
			t.Fatalf("%s before spending: live %d, SQL %d, want Σ credits %d", name, got, w.sqlUser(p.id).Quota, sum)
		}
	}

	// Spend through the relay with every protocol, streamed or not, while credits keep arriving.
	const perUser = 24
	var wg sync.WaitGroup
	failures := make(chan string, 2*perUser+len(creditStepsWhileSpending)*4)
	for _, name := range []string{"ivy", "ian"} {
		p := b.users[name]
		k := w.key(p, nil)
		for i := range perUser {
			wg.Add(1)
			go func() {
				defer wg.Done()
				path, body := "/v1/chat/completions", chatBody("gpt-4o-mini", i%2 == 0)
				if i%3 == 2 {
					path, body = "/v1/messages", messagesBody("claude-sonnet-4-5", i%2 == 0)
				}
				a, err := w.tryCall(context.Background(), "POST", path, k.Key, body)
				if err != nil {
					failures <- fmt.Sprintf("%s call %d: %v", name, i, err)
				} else if a.status != http.StatusOK {
					failures <- fmt.Sprintf("%s call %d: %d %s", name, i, a.status, a.body)
				}
			}()
		}
	}
	for range 4 {
		for _, s := range creditStepsWhileSpending {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.run(b); err != nil {
					failures <- fmt.Sprintf("%s: %v", s.name, err)
				}
			}()
		}
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	if t.Failed() {
		t.FailNow()
	}
	rows := w.waitLogs(2*perUser, "user_id IN ?", []int64{b.users["ivy"].id, b.users["ian"].id})
	b.check(rows)
}
