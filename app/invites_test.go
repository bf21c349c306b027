package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/invite"
)

// invitesView is GET /api/user/invites.
type invitesView struct {
	AffCode       string `json:"aff_code"`
	Invited       int64  `json:"invited"`
	RewardedQuota int64  `json:"rewarded_quota"`
	Latest        []struct {
		Username string `json:"username"`
	} `json:"latest"`
}

func myInvites(t testing.TB, c *apptest.Client) invitesView {
	t.Helper()
	r := c.Do("GET", "/api/user/invites", nil)
	wantStatus(t, r, http.StatusOK)
	var v invitesView
	r.JSON(t, &v)
	return v
}

// registered is the user a POST /api/auth/register answered with.
type registered struct {
	ID        int64   `json:"id"`
	Quota     int64   `json:"quota"`
	AffCode   *string `json:"aff_code"`
	InviterID int64   `json:"inviter_id"`
}

func register(t testing.TB, n *apptest.Node, name, affCode string) (registered, *apptest.Resp) {
	t.Helper()
	body := map[string]string{"username": name, "password": "correct-horse-1"}
	if affCode != "" {
		body["aff_code"] = affCode
	}
	r := n.Anon(t).Do("POST", "/api/auth/register", body)
	var out struct {
		User registered `json:"user"`
	}
	if r.Status == http.StatusCreated {
		r.JSON(t, &out)
	}
	return out.User, r
}

// wantBooks checks Σ credits − Σ spend = balance for a user, in SQL and in the live ledger.
func wantBooks(t testing.TB, n *apptest.Node, userID, wantBalance int64) {
	t.Helper()
	ctx := context.Background()
	credits, err := n.App.Store.SumCredits(ctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	u, err := n.App.Store.UserByID(ctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	live, err := n.App.Ledger.UserBalance(ctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	if credits-u.UsedQuota != u.Quota || u.Quota != wantBalance || live != wantBalance {
		t.Fatalf("user %d books: Σ credits %d − used %d ≠ SQL balance %d / live %d (want %d)", userID, credits, u.UsedQuota, u.Quota, live, wantBalance)
	}
}

// inviteCredits counts a user's invite credits and their Σ units.
func inviteCredits(t testing.TB, n *apptest.Node, userID int64) (int64, int64) {
	t.Helper()
	var cs []model.Credit
	if err := n.App.Store.DB.Where("user_id = ? AND source = ?", userID, model.CreditInvite).Find(&cs).Error; err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, c := range cs {
		sum += c.Units
	}
	return int64(len(cs)), sum
}

func setSettings(t testing.TB, root *apptest.Client, s map[string]any) {
	t.Helper()
	wantStatus(t, root.Do("PUT", "/api/admin/settings", s), http.StatusOK)
}

func TestInvites_SignUpWithCodeRewardsInviterAndInviteeOnce(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	const gift, inviterReward, inviteeReward = 100_000, 300_000, 200_000
	setSettings(t, root, map[string]any{"new_user_quota": gift,
		"invite": map[string]any{"inviter_reward": inviterReward, "invitee_reward": inviteeReward, "first_topup_percent": "0"}})

	alice, r := register(t, n, "alice", "")
	wantStatus(t, r, http.StatusCreated)
	if alice.AffCode == nil || len(*alice.AffCode) != invite.CodeLen || strings.Trim(*alice.AffCode, invite.Alphabet) != "" {
		t.Fatalf("aff_code made at sign-up = %v, want %d characters of %s", alice.AffCode, invite.CodeLen, invite.Alphabet)
	}
	code := *alice.AffCode
	ac := n.Login(t, "alice", "correct-horse-1")
	if v := myInvites(t, ac); v.AffCode != code || v.Invited != 0 || v.RewardedQuota != 0 {
		t.Fatalf("alice's invites before anyone signed up = %+v, want code %s, 0, 0", v, code)
	}

	// A code typed in lower case with spaces around it is the same code.
	bob, r := register(t, n, "bob", "  "+strings.ToLower(code)+" ")
	wantStatus(t, r, http.StatusCreated)
	if bob.InviterID != alice.ID || bob.Quota != gift+inviteeReward || bob.AffCode == nil || *bob.AffCode == code {
		t.Fatalf("bob = %+v, want inviter %d, quota %d and a code of his own", bob, alice.ID, gift+inviteeReward)
	}
	if u, _ := n.App.Store.UserByID(context.Background(), bob.ID); u.InviterID != alice.ID {
		t.Fatalf("bob's inviter_id in SQL = %d, want %d", u.InviterID, alice.ID)
	}
	wantBooks(t, n, alice.ID, gift+inviterReward)
	wantBooks(t, n, bob.ID, gift+inviteeReward)

	// The same sign-up's rewards again (a retried hook) move nothing: one reward per invitee and side.
	bobRow, _ := n.App.Store.UserByID(context.Background(), bob.ID)
	if err := n.App.Invites.Welcome(context.Background(), bobRow, "203.0.113.9"); err != nil {
		t.Fatalf("second welcome: %v", err)
	}
	if k, sum := inviteCredits(t, n, alice.ID); k != 1 || sum != inviterReward {
		t.Fatalf("alice has %d invite credits of %d units, want 1 of %d", k, sum, inviterReward)
	}
	if k, sum := inviteCredits(t, n, bob.ID); k != 1 || sum != inviteeReward {
		t.Fatalf("bob has %d invite credits of %d units, want 1 of %d", k, sum, inviteeReward)
	}
	for _, key := range []string{fmt.Sprintf("invite:inviter:%d", bob.ID), fmt.Sprintf("invite:invitee:%d", bob.ID)} {
		if c := count(t, n, &model.Credit{}, "idem_key = ?", key); c != 1 {
			t.Fatalf("%d credits with idem_key %s, want 1", c, key)
		}
	}
	// Audited: who invited whom, once per reward.
	var rows []model.AuditLog
	n.App.Store.DB.Where("action = ?", invite.Action).Order("id").Find(&rows)
	if len(rows) != 2 {
		t.Fatalf("%d %s audit rows, want 2", len(rows), invite.Action)
	}
	for i, want := range []struct{ target, kind string }{{"bob", "invitee"}, {"alice", "inviter"}} {
		d := rows[i].Detail
		if rows[i].Target != want.target || rows[i].ActorID != bob.ID || !strings.Contains(d, `"kind":"`+want.kind+`"`) ||
			!strings.Contains(d, `"inviter":"alice"`) || !strings.Contains(d, `"invitee":"bob"`) {
			t.Fatalf("audit row %d = %+v, want target %s, kind %s, alice invited bob", i, rows[i], want.target, want.kind)
		}
	}

	// A second invitee; then rewards switched off: the inviter is still recorded, nothing is paid.
	carol, r := register(t, n, "carol", code)
	wantStatus(t, r, http.StatusCreated)
	setSettings(t, root, map[string]any{"invite": map[string]any{"inviter_reward": 0, "invitee_reward": 0, "first_topup_percent": "0"}})
	dave, r := register(t, n, "dave", code)
	wantStatus(t, r, http.StatusCreated)
	if dave.InviterID != alice.ID || dave.Quota != gift {
		t.Fatalf("dave with rewards off = %+v, want inviter %d and only the gift", dave, alice.ID)
	}
	v := myInvites(t, ac)
	if v.AffCode != code || v.Invited != 3 || v.RewardedQuota != 2*inviterReward || len(v.Latest) != 3 ||
		v.Latest[0].Username != "d***e" || v.Latest[2].Username != "b***b" {
		t.Fatalf("alice's invites = %+v, want 3 invited (newest d***e), %d rewarded", v, 2*inviterReward)
	}
	if v := myInvites(t, n.Login(t, "bob", "correct-horse-1")); v.Invited != 0 || v.RewardedQuota != inviteeReward {
		t.Fatalf("bob's invites = %+v, want 0 invited and his own sign-up reward %d", v, inviteeReward)
	}
	wantBooks(t, n, alice.ID, gift+2*inviterReward)
	wantBooks(t, n, carol.ID, gift+inviteeReward)
	wantBooks(t, n, dave.ID, gift)
}

func TestInvites_UnknownOrDisabledInvitersCodeRefusesSignUp(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	// Three sign-ups per address and hour, mallory takes one: the refused ones below must give their slot back.
	setSettings(t, root, map[string]any{"signup_rate_limit": 3,
		"invite": map[string]any{"inviter_reward": 1000, "invitee_reward": 1000, "first_topup_percent": "0"}})
	mallory, r := register(t, n, "mallory", "")
	wantStatus(t, r, http.StatusCreated)
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", mallory.ID), map[string]string{"status": "disabled"}), http.StatusOK)
	users := count(t, n, &model.User{})
	for _, code := range []string{"ZZZZZZZZ", "23456789", "ab!cd", "I0O1I0O1", *mallory.AffCode, strings.Repeat("A", 17), "' OR 1=1 --"} {
		t.Run(code, func(t *testing.T) {
			_, r := register(t, n, "victor", code)
			e := wantError(t, r, http.StatusBadRequest, "aff_code_invalid")
			if e.Error.Field != "aff_code" {
				t.Fatalf("field = %q, want aff_code", e.Error.Field)
			}
		})
	}
	r = zh(n.Anon(t)).Do("POST", "/api/auth/register", map[string]string{"username": "victor", "password": "correct-horse-1", "aff_code": "ZZZZZZZZ"})
	wantChinese(t, wantError(t, r, http.StatusBadRequest, "aff_code_invalid"))
	if got := count(t, n, &model.User{}); got != users {
		t.Fatalf("%d users after refused sign-ups, want %d", got, users)
	}
	if got := count(t, n, &model.Credit{}, "source = ?", model.CreditInvite); got != 0 {
		t.Fatalf("%d invite credits after refused sign-ups, want 0", got)
	}
	wantBooks(t, n, mallory.ID, 0)
	// Eight refusals did not use the address's remaining two sign-ups.
	for _, name := range []string{"victor", "wendy"} {
		if _, r := register(t, n, name, ""); r.Status != http.StatusCreated {
			t.Fatalf("sign-up %s after refusals: %d %s", name, r.Status, r.Body)
		}
	}
}

func TestInvites_ConcurrentFirstCallsAgreeOnOneCode(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	n.SignUp(t, "olduser", "correct-horse-1")
	oldID := userID(t, n, "olduser")
	wantError(t, n.Anon(t).Do("GET", "/api/user/invites", nil), http.StatusUnauthorized, "unauthorized")
	// A user from before invites (and root, made at first start) has no code yet.
	if err := n.App.Store.DB.Model(&model.User{}).Where("id = ?", oldID).UpdateColumn("aff_code", nil).Error; err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   int64
		c    *apptest.Client
	}{{"root", 1, root}, {"olduser", oldID, n.Login(t, "olduser", "correct-horse-1")}} {
		t.Run(tc.name, func(t *testing.T) {
			if u, _ := n.App.Store.UserByID(context.Background(), tc.id); u.AffCode != nil {
				t.Fatalf("%s already has code %s", tc.name, *u.AffCode)
			}
			var u *model.User
			for round := range 8 { // several rounds, each from no code, so that the first calls really overlap
				if round > 0 {
					n.App.Store.DB.Model(&model.User{}).Where("id = ?", tc.id).UpdateColumn("aff_code", nil)
				}
				const calls = 16
				codes := make([]string, calls)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range calls {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						codes[i] = myInvites(t, tc.c).AffCode
					}()
				}
				close(start)
				wg.Wait()
				u, _ = n.App.Store.UserByID(context.Background(), tc.id)
				if u.AffCode == nil || len(*u.AffCode) != invite.CodeLen {
					t.Fatalf("stored code = %v", u.AffCode)
				}
				for i, c := range codes {
					if c != *u.AffCode {
						t.Fatalf("round %d call %d answered %q, stored %q: concurrent first calls disagree", round, i, c, *u.AffCode)
					}
				}
			}
			// The lazily made code works for a sign-up like one made at registration.
			invitee, r := register(t, n, "by-"+tc.name, strings.ToLower(*u.AffCode))
			wantStatus(t, r, http.StatusCreated)
			if invitee.InviterID != tc.id {
				t.Fatalf("inviter_id = %d, want %d", invitee.InviterID, tc.id)
			}
		})
	}
}

// topupCredit credits a paid top-up order the way a payment provider's notify does (Ref = order_no).
func topupCredit(t testing.TB, n *apptest.Node, userID, units int64, orderNo string) {
	t.Helper()
	err := n.App.Accounts.Credit(context.Background(), userID, units, account.CreditSource{Kind: model.CreditTopup,
		Ref: orderNo, Action: "topup.paid"})
	if err != nil {
		t.Fatalf("top-up %s: %v", orderNo, err)
	}
}

func TestInvites_FirstTopupRewardIsPaidOnceAndRoundedOnce(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	ctx := context.Background()
	percent := func(p string) {
		setSettings(t, root, map[string]any{"invite": map[string]any{"inviter_reward": 0, "invitee_reward": 0, "first_topup_percent": p}})
	}
	alice, _ := register(t, n, "alice", "")
	code := *alice.AffCode
	bob, _ := register(t, n, "bob", code)
	carol, _ := register(t, n, "carol", code)
	dave, _ := register(t, n, "dave", code)
	loner, _ := register(t, n, "loner", "")

	// Percentage 0: nothing.
	percent("0")
	topupCredit(t, n, bob.ID, 1_369_863, "ORDER-B0")
	if err := n.App.Invites.RewardFirstTopup(ctx, bob.ID, 1_369_863, "ORDER-B0"); err != nil {
		t.Fatal(err)
	}
	wantBooks(t, n, alice.ID, 0)

	// Bob's first top-up was paid while the percentage was 0: his later ones are not first.
	percent("5")
	topupCredit(t, n, bob.ID, 1_369_863, "ORDER-B1")
	if err := n.App.Invites.RewardFirstTopup(ctx, bob.ID, 1_369_863, "ORDER-B1"); err != nil {
		t.Fatal(err)
	}
	wantBooks(t, n, alice.ID, 0)

	// Carol's first two top-ups are notified at once, 8 times over: one reward, 5 % of 1,369,863 = 68,493.15.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- n.App.Invites.RewardFirstTopup(ctx, carol.ID, 1_369_863, fmt.Sprintf("ORDER-C%d", i%2))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent reward: %v", err)
		}
	}
	wantBooks(t, n, alice.ID, 68_493)
	if c := count(t, n, &model.Credit{}, "idem_key = ?", fmt.Sprintf("invite:first_topup:%d", carol.ID)); c != 1 {
		t.Fatalf("%d first top-up credits for carol, want 1", c)
	}
	// A later top-up of carol's adds nothing.
	if err := n.App.Invites.RewardFirstTopup(ctx, carol.ID, 50_000_000, "ORDER-C9"); err != nil {
		t.Fatal(err)
	}
	wantBooks(t, n, alice.ID, 68_493)

	// Exactly half a unit rounds away from zero: 10 % of 1,369,865 = 136,986.5 → 136,987.
	percent("10")
	topupCredit(t, n, dave.ID, 1_369_865, "ORDER-D1")
	if err := n.App.Invites.RewardFirstTopup(ctx, dave.ID, 1_369_865, "ORDER-D1"); err != nil {
		t.Fatal(err)
	}
	wantBooks(t, n, alice.ID, 68_493+136_987)

	// No inviter: nothing.
	if err := n.App.Invites.RewardFirstTopup(ctx, loner.ID, 1_000_000, "ORDER-L1"); err != nil {
		t.Fatal(err)
	}
	if k, _ := inviteCredits(t, n, loner.ID); k != 0 {
		t.Fatalf("loner got %d invite credits", k)
	}
	var row model.AuditLog
	n.App.Store.DB.Where("action = ? AND detail LIKE ?", invite.Action, `%ORDER-D1%`).Take(&row)
	if row.Target != "alice" || !strings.Contains(row.Detail, `"kind":"first_topup"`) || !strings.Contains(row.Detail, `"invitee":"dave"`) ||
		!strings.Contains(row.Detail, `"units":136987`) {
		t.Fatalf("first top-up audit row = %+v", row)
	}
	if v := myInvites(t, n.Login(t, "alice", "correct-horse-1")); v.Invited != 3 || v.RewardedQuota != 68_493+136_987 {
		t.Fatalf("alice's invites = %+v", v)
	}
	for _, id := range []int64{bob.ID, carol.ID, dave.ID} {
		u, _ := n.App.Store.UserByID(ctx, id)
		wantBooks(t, n, id, u.Quota)
	}
}

func TestSettings_InviteAndDisplayAreValidated(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	inv := func(inviter, invitee any, pct any) map[string]any {
		return map[string]any{"invite": map[string]any{"inviter_reward": inviter, "invitee_reward": invitee, "first_topup_percent": pct}}
	}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"negative inviter reward", inv(-1, 0, "0"), "invite.inviter_reward"},
		{"inviter reward past 2^53", inv(int64(1)<<53+1, 0, "0"), "invite.inviter_reward"},
		{"negative invitee reward", inv(0, -5, "0"), "invite.invitee_reward"},
		{"invitee reward past 2^53", inv(0, int64(1)<<62, "0"), "invite.invitee_reward"},
		{"percent above 100", inv(0, 0, "100.01"), "invite.first_topup_percent"},
		{"percent 101", inv(0, 0, "101"), "invite.first_topup_percent"},
		{"negative percent", inv(0, 0, "-1"), "invite.first_topup_percent"},
		{"percent with 3 decimals", inv(0, 0, "5.125"), "invite.first_topup_percent"},
		{"percent in exponent form", inv(0, 0, "5e1"), "invite.first_topup_percent"},
		{"empty percent", inv(0, 0, ""), "invite.first_topup_percent"},
		{"percent with spaces", inv(0, 0, " 5"), "invite.first_topup_percent"},
		{"unknown currency", map[string]any{"display_currency": "EUR"}, "display_currency"},
		{"currency in lower case", map[string]any{"display_currency": "usd"}, "display_currency"},
		{"zero rate", map[string]any{"display_rate": "0"}, "display_rate"},
		{"zero rate with decimals", map[string]any{"display_rate": "0.000000"}, "display_rate"},
		{"negative rate", map[string]any{"display_rate": "-7.3"}, "display_rate"},
		{"rate with 7 decimals", map[string]any{"display_rate": "7.1234567"}, "display_rate"},
		{"rate not a number", map[string]any{"display_rate": "seven"}, "display_rate"},
		{"empty rate", map[string]any{"display_rate": ""}, "display_rate"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantField(t, root.Do("PUT", "/api/admin/settings", tc.body), tc.field) })
	}
	// Reward as a JSON string, not a number.
	wantError(t, root.Do("PUT", "/api/admin/settings", inv("5", 0, "0")), http.StatusBadRequest, "invalid_json")
	got := root.Do("GET", "/api/admin/settings", nil).M(t)
	if got["display_currency"] != "USD" || got["display_rate"] != "7.3" || got["invite"].(map[string]any)["first_topup_percent"] != "0" {
		t.Fatalf("refused writes changed settings: %v", got)
	}
	for _, ok := range []map[string]any{
		inv(int64(1)<<53, 0, "100"), inv(0, int64(1)<<53, "0.01"), inv(1_000_000, 500_000, "12.5"),
		{"display_currency": "CNY", "display_rate": "7.123456"}, {"display_currency": "units"}, {"display_rate": "0.000001"},
	} {
		wantStatus(t, root.Do("PUT", "/api/admin/settings", ok), http.StatusOK)
	}
	got = root.Do("GET", "/api/admin/settings", nil).M(t)
	iv := got["invite"].(map[string]any)
	if iv["inviter_reward"] != float64(1_000_000) || iv["invitee_reward"] != float64(500_000) || iv["first_topup_percent"] != "12.5" ||
		got["display_currency"] != "units" || got["display_rate"] != "0.000001" {
		t.Fatalf("settings after valid writes = %v", got)
	}
	if st := n.Root(t).Do("GET", "/api/status", nil).M(t); st["display_currency"] != "units" || st["display_rate"] != "0.000001" {
		t.Fatalf("/api/status = %v", st)
	}
}
