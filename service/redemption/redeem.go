package redemption

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

// Redeemed is what a user gets for a code: the units added and the live balance after.
type Redeemed struct {
	QuotaAdded int64 `json:"quota_added"`
	Quota      int64 `json:"quota"`
}

// errClaimLost aborts a credit whose code another redeem (or an admin) changed after it was read.
var errClaimLost = errors.New("redemption code claimed by another request")

// Redeem credits the code's quota to the user, once: the code is marked used by one conditional UPDATE inside
// the credit's transaction, so of any number of concurrent redeems of one code exactly one moves money (one
// credit row, one audit row with the user and ip). Answers: 404 code_invalid (unknown, malformed, wrong case,
// disabled), 409 code_used, 410 code_expired, 429 too_many_attempts (guess limits, see limit.go), 400
// validation_failed for an empty or oversized input.
func (s *Service) Redeem(ctx context.Context, user *model.User, ip, input string) (*Redeemed, error) {
	if strings.TrimSpace(input) == "" {
		return nil, apperr.Field("code", "required")
	}
	if len(input) > maxInput {
		return nil, apperr.Field("code", "too long")
	}
	release, err := s.guesses.reserve(ctx, user.ID, ip)
	if err != nil {
		return nil, err
	}
	guess := true // an attempt that found no redeemable code keeps its place in the guess counters
	defer func() {
		if !guess {
			release()
		}
	}()
	code, ok := canonical(input)
	if !ok {
		return nil, apperr.New(http.StatusNotFound, "code_invalid")
	}
	r, err := s.store.RedemptionByHash(ctx, s.keys.Hash(code))
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "code_invalid")
	} else if err != nil {
		guess = false
		return nil, err
	}
	now := s.now().UTC()
	if err := refusal(r, now); err != nil {
		guess = r.Status == model.RedemptionDisabled
		return nil, err
	}
	// The claim fails only when the code changed since it was read: someone else redeemed it, or an admin
	// disabled or deleted it (say which), or disabled and enabled it again (then claim again).
	for {
		if err = s.credit(ctx, user, ip, r, now); !errors.Is(err, errClaimLost) {
			break
		}
		again, rerr := s.store.RedemptionByID(ctx, r.ID)
		if errors.Is(rerr, model.ErrNotFound) {
			return nil, apperr.New(http.StatusNotFound, "code_invalid")
		} else if rerr != nil {
			guess = false
			return nil, rerr
		}
		if err := refusal(again, now); err != nil {
			guess = again.Status == model.RedemptionDisabled
			return nil, err
		}
	}
	guess = false
	if err != nil {
		return nil, err
	}
	u, err := s.accounts.Get(ctx, user.ID)
	if err != nil {
		return nil, err
	}
	return &Redeemed{QuotaAdded: r.Quota, Quota: u.Quota}, nil
}

// credit moves the code's quota onto the user's balance in one transaction with the claim of the code.
func (s *Service) credit(ctx context.Context, user *model.User, ip string, r *model.Redemption, now time.Time) error {
	err := s.accounts.Credit(ctx, user.ID, r.Quota, account.CreditSource{
		Kind: model.CreditRedeem, Ref: strconv.FormatInt(r.ID, 10),
		Actor: audit.Actor{ID: user.ID, Name: user.Username, IP: ip}, Action: "redemption.redeem",
		Target: "redemption " + r.Hint, Note: "code " + r.Hint + " of batch " + r.BatchID,
		Detail: map[string]any{"id": r.ID, "batch": r.BatchID, "hint": r.Hint, "quota": r.Quota},
		Claim: func(tx *gorm.DB) error {
			won, err := s.store.ClaimRedemption(ctx, tx, r.ID, user.ID, ip, now)
			if err == nil && !won {
				err = errClaimLost
			}
			return err
		},
	})
	if errors.Is(err, account.ErrAlreadyCredited) { // the code's credit exists: it was redeemed
		return apperr.New(http.StatusConflict, "code_used")
	}
	return err
}

// refusal says why a code cannot be redeemed at now, or nil when it can.
func refusal(r *model.Redemption, now time.Time) error {
	switch r.StateAt(now) {
	case model.RedemptionUsed:
		return apperr.New(http.StatusConflict, "code_used")
	case model.RedemptionExpired:
		return apperr.New(http.StatusGone, "code_expired")
	case model.RedemptionDisabled:
		return apperr.New(http.StatusNotFound, "code_invalid")
	}
	return nil
}
