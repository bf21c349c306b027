package account

import (
	"context"
	"fmt"
	"strings"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/routing"
)

// MaxBalanceAlert bounds a low-balance threshold (units): 2^53, where quota arithmetic stays exact.
const MaxBalanceAlert = 1 << 53

// SelfInput is a user's edit of their own profile (PATCH /api/user/self); nil fields stay.
type SelfInput struct {
	// BalanceAlert: e-mail me once when my balance falls below this many units (0 = off).
	BalanceAlert *int64 `json:"balance_alert"`
	// Language of my e-mails: "en" or "zh-CN" ("" = en).
	Language *string `json:"language"`
	// Email is where my alerts go ("" = none).
	Email *string `json:"email"`
	// Routing is my routing preferences (PATCH /api/user/routing); my keys' and my requests' override them.
	Routing *model.RoutePrefs `json:"-"`
}

// Languages a user's e-mails can be written in.
var Languages = map[string]bool{"": true, "en": true, "zh-CN": true}

// UpdateSelf applies a user's edit of their own profile and invalidates the cached user on every node (the
// relay's view carries balance_alert to the alert service).
func (s *Service) UpdateSelf(ctx context.Context, id int64, in SelfInput) (*model.User, error) {
	fields := map[string]any{}
	if in.BalanceAlert != nil {
		if *in.BalanceAlert < 0 || *in.BalanceAlert > MaxBalanceAlert {
			return nil, apperr.Field("balance_alert", fmt.Sprintf("units between 0 (off) and %d", int64(MaxBalanceAlert)))
		}
		fields["balance_alert"] = *in.BalanceAlert
	}
	if in.Language != nil {
		if !Languages[*in.Language] {
			return nil, apperr.Field("language", `"en" or "zh-CN"`)
		}
		fields["language"] = *in.Language
	}
	if in.Email != nil && *in.Email != "" {
		// A new address is only taken once a code sent to it is entered (SendEmailChange, ChangeEmail);
		// sending the current one back, or "" to remove it, is fine.
		u, err := s.store.UserByID(ctx, id)
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(u.Email, *in.Email) {
			return nil, apperr.Field("email", "changed with a code sent to the new address (POST /api/user/email/send)")
		}
	} else if in.Email != nil {
		fields["email"] = ""
	}
	if in.Routing != nil {
		if err := routing.Check(*in.Routing); err != nil {
			return nil, err
		}
		fields["routing"] = model.JSON[model.RoutePrefs]{V: *in.Routing}
	}
	if len(fields) > 0 {
		if err := s.store.UpdateUserFields(ctx, id, fields); err != nil {
			return nil, fmt.Errorf("update self %d: %w", id, err)
		}
		s.changed(ctx, id)
	}
	return s.Get(ctx, id)
}
