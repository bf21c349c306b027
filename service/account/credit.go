package account

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"gorm.io/gorm"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/secret"
)

// CreditSource says where a credit comes from and makes it happen at most once.
type CreditSource struct {
	Kind string // model.CreditAdmin, CreditTopup, CreditRedeem, CreditInvite, CreditSignup
	Ref  string // what is credited: an order_no, a code id, an invitee id ("" for an admin's adjustment)
	// IdemKey is unique across all credits: a second credit with the same key moves nothing. Empty: Kind:Ref
	// when Ref is set, else a random key (every admin adjustment is its own credit).
	IdemKey string
	Actor   audit.Actor    // who caused it (the user themself for a code or a top-up, 0 for a provider's notify)
	Action  string         // audit action, e.g. "user.quota", "redemption.redeem", "topup.paid", "invite.reward"
	Target  string         // audit target; empty: the user's name
	Note    string         // kept on the credit row (≤ 255 bytes)
	Detail  map[string]any // extra audit detail (units and the credit's source are added)
	// Claim runs first inside the transaction: the conditional update that makes the credit happen once (a
	// code marked used, an order marked paid). Its error aborts the credit and is returned unchanged.
	Claim func(tx *gorm.DB) error
}

// ErrAlreadyCredited is returned (wrapped) when the source's IdemKey was credited before: nothing moved.
var ErrAlreadyCredited = model.ErrAlreadyCredited

// Credit moves units (negative: an admin's deduction, never below zero) onto a user's balance: one SQL
// transaction with the source's claim, the credit row and the audit row, then the live ledger. It is the
// only way a balance grows; every credit source goes through it, so Σ credits − Σ logged cost = balance.
// A repeat of an IdemKey returns ErrAlreadyCredited; a deduction below zero 400 quota_underflow.
func (s *Service) Credit(ctx context.Context, userID, units int64, src CreditSource) error {
	if units == 0 {
		return apperr.Field("units", "must not be zero")
	}
	if src.Kind == "" || src.Action == "" {
		return fmt.Errorf("credit user %d: source kind and audit action are required", userID)
	}
	key := src.IdemKey
	if key == "" && src.Ref != "" {
		key = src.Kind + ":" + src.Ref
	}
	if key == "" {
		r, err := secret.RandomBase62(24)
		if err != nil {
			return err
		}
		key = src.Kind + ":" + r
	}
	target := src.Target
	if target == "" {
		if u, err := s.Get(ctx, userID); err == nil {
			target = u.Username
		} else {
			target = strconv.FormatInt(userID, 10)
		}
	}
	detail := map[string]any{"units": units, "source": src.Kind}
	if src.Ref != "" {
		detail["ref"] = src.Ref
	}
	for k, v := range src.Detail {
		detail[k] = v
	}
	dj, _ := json.Marshal(detail)
	note := src.Note
	if len(note) > 255 {
		note = note[:255]
	}
	err := s.store.Transact(ctx, func(tx *gorm.DB) error {
		if src.Claim != nil {
			if err := src.Claim(tx); err != nil {
				return err
			}
		}
		c := &model.Credit{UserID: userID, Units: units, Source: src.Kind, Ref: src.Ref, IdemKey: key,
			ActorID: src.Actor.ID, Note: note}
		if err := s.store.CreditUser(ctx, tx, c); errors.Is(err, model.ErrNotFound) {
			if units < 0 {
				return apperr.New(http.StatusBadRequest, "quota_underflow")
			}
			return apperr.New(http.StatusNotFound, "user_not_found")
		} else if err != nil {
			return fmt.Errorf("credit user %d (%s): %w", userID, key, err)
		}
		if err := s.store.CreateAuditTx(ctx, tx, &model.AuditLog{ActorID: src.Actor.ID, ActorName: src.Actor.Name,
			Action: src.Action, Target: target, Detail: string(dj), IP: src.Actor.IP}); err != nil {
			return fmt.Errorf("audit credit of user %d (%s): %w", userID, key, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if s.balances != nil {
		if err := s.balances.AdjustUser(ctx, userID, units); err != nil {
			// SQL has the credit; make the live book reload it rather than serve a stale balance.
			slog.Error("live balance after credit", "user", userID, "units", units, "err", err)
			if ferr := s.balances.Forget(context.WithoutCancel(ctx), userID, 0); ferr != nil {
				return fmt.Errorf("credit user %d: live balance: %w", userID, err)
			}
		}
	}
	s.changed(ctx, userID)
	return nil
}
