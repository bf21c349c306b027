package setting

import (
	"github.com/shopspring/decimal"

	"tollgate/service/apperr"
)

// maxReward is the largest invite reward in units: pricing.MaxCost (2^53, exact in the Redis ledger's
// doubles). Written out because pricing imports setting.
const maxReward = 1 << 53

// DisplayCurrencies are the values display_currency may take.
var DisplayCurrencies = map[string]bool{"USD": true, "CNY": true, "units": true}

var hundred = decimal.NewFromInt(100)

// validateInvite checks the invite rewards and how money is displayed (decimals read as ParseDecimal does).
func validateInvite(s *Settings) error {
	pct, pctOK := ParseDecimal(s.Invite.FirstTopupPercent)
	rate, rateOK := ParseDecimal(s.DisplayRate)
	switch {
	case s.Invite.InviterReward < 0 || s.Invite.InviterReward > maxReward:
		return apperr.Field("invite.inviter_reward", "units between 0 and 9007199254740992")
	case s.Invite.InviteeReward < 0 || s.Invite.InviteeReward > maxReward:
		return apperr.Field("invite.invitee_reward", "units between 0 and 9007199254740992")
	case !pctOK || pct.GreaterThan(hundred) || Places(pct) > 2:
		return apperr.Field("invite.first_topup_percent", `a decimal string between "0" and "100" with at most 2 decimals`)
	case !DisplayCurrencies[s.DisplayCurrency]:
		return apperr.Field("display_currency", `must be "USD", "CNY" or "units"`)
	case !rateOK || rate.Sign() <= 0 || Places(rate) > 6:
		return apperr.Field("display_rate", "a decimal string above 0 with at most 6 decimals")
	}
	return nil
}
