// Package invite runs invites: every user's aff_code, the inviter a sign-up names with one, and the rewards
// (for the inviter and the invitee at sign-up, and the inviter's share of the invitee's first top-up), each
// credited through account.Credit at most once per invitee.
package invite

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/pricing"
	"tollgate/service/setting"
)

// Alphabet is what invite codes are made of: digits and upper-case letters without 0, 1, I and O, which
// read alike. 32 symbols, so one random byte masked to 5 bits picks one without bias.
const Alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// CodeLen is the length of an invite code: 32^8 ≈ 10^12 codes.
const CodeLen = 8

// codeTries bounds the attempts at a free code (a collision is a one-in-a-billion event per try at a
// million users).
const codeTries = 8

// Action is the audit action of every invite reward.
const Action = "invite.reward"

// Service is the invite book.
type Service struct {
	store    *model.Store
	settings *setting.Service
	accounts *account.Service
	random   io.Reader
}

// New builds the service.
func New(store *model.Store, settings *setting.Service, accounts *account.Service) *Service {
	return &Service{store: store, settings: settings, accounts: accounts, random: rand.Reader}
}

// Normalize is how a typed code is compared: without surrounding space, in upper case.
func Normalize(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// Inviter resolves the aff_code of a sign-up to the inviter's id: 0 for no code, 400 aff_code_invalid for a
// code nobody holds or whose holder is disabled (both look the same to the caller). The invitee does not
// exist yet, so the inviter is always someone else: nobody can invite themself.
func (s *Service) Inviter(ctx context.Context, code string) (int64, error) {
	code = Normalize(code)
	if code == "" {
		return 0, nil
	}
	invalid := apperr.New(http.StatusBadRequest, "aff_code_invalid")
	invalid.Field = "aff_code"
	if len(code) > 16 || strings.Trim(code, Alphabet) != "" {
		return 0, invalid
	}
	u, err := s.store.UserByAffCode(ctx, code)
	if errors.Is(err, model.ErrNotFound) {
		return 0, invalid
	} else if err != nil {
		return 0, fmt.Errorf("aff_code: %w", err)
	}
	if u.Status != model.StatusEnabled {
		return 0, invalid
	}
	return u.ID, nil
}

// Welcome runs after a sign-up created u: it gives u an invite code and, when u was invited, pays the
// invitee's and the inviter's rewards. A failure to make the code is only logged (the first GET of the
// invites page makes it); a failed reward is returned.
func (s *Service) Welcome(ctx context.Context, u *model.User, ip string) error {
	if code, err := s.ensureCode(ctx, u.ID); err != nil {
		slog.Error("invite code at sign-up", "user", u.ID, "err", err)
	} else {
		u.AffCode = &code
	}
	if u.InviterID == 0 {
		return nil
	}
	inviter, err := s.store.UserByID(ctx, u.InviterID)
	if err != nil {
		return fmt.Errorf("inviter %d: %w", u.InviterID, err)
	}
	st := s.settings.Get().Invite
	actor := audit.Actor{ID: u.ID, Name: u.Username, IP: ip}
	if st.InviteeReward > 0 {
		if err := s.reward(ctx, u, inviter, u, "invitee", st.InviteeReward, actor, nil); err != nil {
			return err
		}
		u.Quota += st.InviteeReward
	}
	if st.InviterReward > 0 {
		if err := s.reward(ctx, u, inviter, inviter, "inviter", st.InviterReward, actor, nil); err != nil {
			return err
		}
	}
	return nil
}

// RewardFirstTopup credits an invitee's inviter first_topup_percent % of paidUnits (the units a paid top-up
// order credited), rounded as pricing.Percent does. Only the invitee's first paid top-up counts: once per
// invitee whatever the concurrency (IdemKey invite:first_topup:<invitee>), and not at all when the earliest
// top-up credit of the invitee is another order (one paid while the percentage was 0 makes later ones not
// first). Nothing happens, and nil is returned, when the percentage is 0, the invitee has no inviter, the share
// rounds to 0, or the reward was given before.
func (s *Service) RewardFirstTopup(ctx context.Context, inviteeID, paidUnits int64, orderNo string) error {
	percent, err := decimal.NewFromString(s.settings.Get().Invite.FirstTopupPercent)
	if err != nil || percent.Sign() <= 0 {
		return nil
	}
	units := pricing.Percent(paidUnits, percent)
	if units == 0 {
		return nil
	}
	invitee, err := s.store.UserByID(ctx, inviteeID)
	if err != nil {
		return fmt.Errorf("invitee %d: %w", inviteeID, err)
	}
	if invitee.InviterID == 0 {
		return nil
	}
	if first, err := s.store.FirstCredit(ctx, inviteeID, model.CreditTopup); err == nil && first.Ref != orderNo {
		return nil
	} else if err != nil && !errors.Is(err, model.ErrNotFound) {
		return fmt.Errorf("first top-up of %d: %w", inviteeID, err)
	}
	inviter, err := s.store.UserByID(ctx, invitee.InviterID)
	if err != nil {
		return fmt.Errorf("inviter %d: %w", invitee.InviterID, err)
	}
	return s.reward(ctx, invitee, inviter, inviter, "first_topup", units, audit.Actor{},
		map[string]any{"order_no": orderNo, "paid_units": paidUnits, "percent": percent.String()})
}

// reward credits one invite reward to (the invitee or the inviter) at most once per invitee and kind.
func (s *Service) reward(ctx context.Context, invitee, inviter, to *model.User, kind string, units int64,
	actor audit.Actor, extra map[string]any) error {
	if inviter.ID == invitee.ID {
		return nil // no self-invite, whatever the rows say
	}
	ref := strconv.FormatInt(invitee.ID, 10)
	detail := map[string]any{"kind": kind, "inviter_id": inviter.ID, "inviter": inviter.Username,
		"invitee_id": invitee.ID, "invitee": invitee.Username}
	for k, v := range extra {
		detail[k] = v
	}
	err := s.accounts.Credit(ctx, to.ID, units, account.CreditSource{Kind: model.CreditInvite, Ref: ref,
		IdemKey: "invite:" + kind + ":" + ref, Actor: actor, Action: Action, Target: to.Username,
		Note: fmt.Sprintf("invite %s reward: %s invited %s", kind, inviter.Username, invitee.Username), Detail: detail})
	if errors.Is(err, account.ErrAlreadyCredited) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("invite %s reward for %d: %w", kind, invitee.ID, err)
	}
	return nil
}

// newCode draws a random code.
func (s *Service) newCode() (string, error) {
	b := make([]byte, CodeLen)
	if _, err := io.ReadFull(s.random, b); err != nil {
		return "", fmt.Errorf("random invite code: %w", err)
	}
	for i := range b {
		b[i] = Alphabet[b[i]&31]
	}
	return string(b), nil
}

// ensureCode returns the user's invite code, making one if they have none. The code is set by a conditional
// update (only while the column is NULL), so concurrent first calls agree on the one that landed first; a code
// another user holds is drawn again.
func (s *Service) ensureCode(ctx context.Context, userID int64) (string, error) {
	for range codeTries {
		code, err := s.newCode()
		if err != nil {
			return "", err
		}
		set, err := s.store.SetAffCode(ctx, userID, code)
		if errors.Is(err, model.ErrDuplicate) {
			continue
		} else if err != nil {
			return "", fmt.Errorf("set invite code of %d: %w", userID, err)
		}
		if set {
			return code, nil
		}
		u, err := s.store.UserByID(ctx, userID)
		if err != nil {
			return "", fmt.Errorf("invite code of %d: %w", userID, err)
		}
		if u.AffCode != nil {
			return *u.AffCode, nil
		}
	}
	return "", fmt.Errorf("no free invite code for user %d after %d tries", userID, codeTries)
}

// Invitee is one invited user as their inviter sees them.
type Invitee struct {
	Username  string    `json:"username"` // masked
	CreatedAt time.Time `json:"created_at"`
}

// Summary is a user's invite page.
type Summary struct {
	AffCode       string    `json:"aff_code"`
	Invited       int64     `json:"invited"`        // users who signed up with the code
	RewardedQuota int64     `json:"rewarded_quota"` // Σ invite credits to the user, in units
	Latest        []Invitee `json:"latest"`         // the newest invitees (at most LatestN)
}

// LatestN is how many invitees Summary lists.
const LatestN = 10

// Mine returns the user's invite page, making their code on the first call.
func (s *Service) Mine(ctx context.Context, userID int64) (*Summary, error) {
	u, err := s.store.UserByID(ctx, userID)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "user_not_found")
	} else if err != nil {
		return nil, err
	}
	out := &Summary{Latest: []Invitee{}}
	if u.AffCode != nil {
		out.AffCode = *u.AffCode
	} else if out.AffCode, err = s.ensureCode(ctx, userID); err != nil {
		return nil, err
	}
	if out.Invited, err = s.store.CountInvitees(ctx, userID); err != nil {
		return nil, err
	}
	if out.RewardedQuota, err = s.store.SumCreditsFrom(ctx, userID, model.CreditInvite); err != nil {
		return nil, err
	}
	latest, err := s.store.LatestInvitees(ctx, userID, LatestN)
	if err != nil {
		return nil, err
	}
	for _, v := range latest {
		out.Latest = append(out.Latest, Invitee{Username: Mask(v.Username), CreatedAt: v.CreatedAt})
	}
	return out, nil
}

// Mask shows a username's first and last character only ("alice" → "a***e").
func Mask(name string) string {
	r := []rune(name)
	if len(r) < 3 {
		return "***"
	}
	return string(r[0]) + "***" + string(r[len(r)-1])
}
