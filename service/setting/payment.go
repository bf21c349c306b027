package setting

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	"tollgate/service/apperr"
	"tollgate/service/secret"
)

// zeroDecimal are the currencies without minor units (amounts are whole numbers), as Stripe lists them.
var zeroDecimal = map[string]bool{"BIF": true, "CLP": true, "DJF": true, "GNF": true, "JPY": true, "KMF": true,
	"KRW": true, "MGA": true, "PYG": true, "RWF": true, "UGX": true, "VND": true, "VUV": true, "XAF": true,
	"XOF": true, "XPF": true}

// threeDecimal are the currencies with three minor digits: not supported (no provider here needs them).
var threeDecimal = map[string]bool{"BHD": true, "JOD": true, "KWD": true, "OMR": true, "TND": true}

var (
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
	methodRe   = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	// DecimalRe is the only shape of a money string we accept: digits, optionally a point and digits.
	DecimalRe = regexp.MustCompile(`^[0-9]{1,15}(\.[0-9]{1,12})?$`)
)

// CurrencyDecimals is how many minor digits an amount in currency may have (0 for JPY-like currencies, 2
// otherwise); ok is false for a malformed or unsupported (three-digit) currency.
func CurrencyDecimals(currency string) (int, bool) {
	if !currencyRe.MatchString(currency) || threeDecimal[currency] {
		return 0, false
	}
	if zeroDecimal[currency] {
		return 0, true
	}
	return 2, true
}

// ParseDecimal reads a money string of the accepted shape (no sign, no exponent, no spaces).
func ParseDecimal(s string) (decimal.Decimal, bool) {
	if !DecimalRe.MatchString(s) {
		return decimal.Decimal{}, false
	}
	d, err := decimal.NewFromString(s)
	return d, err == nil
}

// Places is the number of digits after the point that d needs (10.50 → 1, 10.00 → 0).
func Places(d decimal.Decimal) int {
	if e := -d.Exponent(); e > 0 {
		// strip trailing zeros: decimal keeps the exponent it was written with
		s := strings.TrimRight(d.StringFixed(int32(e)), "0")
		if i := strings.IndexByte(s, '.'); i >= 0 {
			return len(s) - i - 1
		}
	}
	return 0
}

func amountField(field, v string, places int) (decimal.Decimal, error) {
	d, ok := ParseDecimal(v)
	if !ok || d.Sign() <= 0 {
		return d, apperr.Field(field, "a positive decimal number like 10.00")
	}
	if Places(d) > places {
		return d, apperr.Field(field, fmt.Sprintf("at most %d decimals", places))
	}
	return d, nil
}

// providerTerms validates what both providers share: currency, rate and the amount range.
func providerTerms(prefix, currency, rate, minAmount, maxAmount string) (lo, hi decimal.Decimal, err error) {
	places, ok := CurrencyDecimals(currency)
	if !ok {
		return lo, hi, apperr.Field(prefix+".currency", "a three-letter ISO code in capitals (currencies with 3 minor digits are not supported)")
	}
	if r, ok := ParseDecimal(rate); !ok || r.Sign() <= 0 {
		return lo, hi, apperr.Field(prefix+".rate", "a positive decimal number (provider currency per 1 USD of quota)")
	}
	if lo, err = amountField(prefix+".min_amount", minAmount, places); err != nil {
		return lo, hi, err
	}
	if hi, err = amountField(prefix+".max_amount", maxAmount, places); err != nil {
		return lo, hi, err
	}
	if lo.GreaterThan(hi) {
		return lo, hi, apperr.Field(prefix+".min_amount", "must not exceed max_amount")
	}
	return lo, hi, nil
}

type amountRange struct{ lo, hi decimal.Decimal }

// validatePayment checks the payment settings: every amount, rate and percent a decimal string in range,
// an enabled provider fully configured, presets inside the range of every enabled provider.
func validatePayment(p *Payment) error {
	if p.OrderTTLMinutes < 1 || p.OrderTTLMinutes > 10080 {
		return apperr.Field("payment.order_ttl_minutes", "minutes between 1 and 10080")
	}
	var ranges []amountRange
	e := p.Epay
	lo, hi, err := providerTerms("payment.epay", e.Currency, e.Rate, e.MinAmount, e.MaxAmount)
	if err != nil {
		return err
	}
	if len(e.Methods) > 10 {
		return apperr.Field("payment.epay.methods", "at most 10 methods")
	}
	for _, m := range e.Methods {
		if !methodRe.MatchString(m) {
			return apperr.Field("payment.epay.methods", "each method is 1-32 of a-z, 0-9, _ (e.g. alipay, wxpay)")
		}
	}
	if e.GatewayURL != "" {
		if u, err := url.Parse(e.GatewayURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(e.GatewayURL) > 512 {
			return apperr.Field("payment.epay.gateway_url", "an http(s) URL")
		}
	}
	if len(e.PID) > 64 || len(e.Key) > 256 {
		return apperr.Field("payment.epay.pid", "pid at most 64 and key at most 256 characters")
	}
	if e.Enabled {
		switch {
		case e.GatewayURL == "":
			return apperr.Field("payment.epay.gateway_url", "required when Epay is enabled")
		case e.PID == "":
			return apperr.Field("payment.epay.pid", "required when Epay is enabled")
		case e.Key == "":
			return apperr.Field("payment.epay.key", "required when Epay is enabled")
		case len(e.Methods) == 0:
			return apperr.Field("payment.epay.methods", "at least one method when Epay is enabled")
		}
		ranges = append(ranges, amountRange{lo, hi})
	}
	s := p.Stripe
	if lo, hi, err = providerTerms("payment.stripe", s.Currency, s.Rate, s.MinAmount, s.MaxAmount); err != nil {
		return err
	}
	if len(s.SecretKey) > 256 || len(s.WebhookSecret) > 256 {
		return apperr.Field("payment.stripe.secret_key", "at most 256 characters")
	}
	if s.Enabled {
		switch {
		case s.SecretKey == "":
			return apperr.Field("payment.stripe.secret_key", "required when Stripe is enabled")
		case s.WebhookSecret == "":
			return apperr.Field("payment.stripe.webhook_secret", "required when Stripe is enabled")
		}
		ranges = append(ranges, amountRange{lo, hi})
	}
	if len(p.Presets) > 20 {
		return apperr.Field("payment.presets", "at most 20 preset amounts")
	}
	for _, v := range p.Presets {
		d, err := amountField("payment.presets", v, 2)
		if err != nil {
			return err
		}
		for _, r := range ranges {
			if d.LessThan(r.lo) || d.GreaterThan(r.hi) {
				return apperr.Field("payment.presets", fmt.Sprintf("%s is outside the min_amount-max_amount range of an enabled provider", v))
			}
		}
	}
	if len(p.Bonus) > 20 {
		return apperr.Field("payment.bonus", "at most 20 tiers")
	}
	hundred := decimal.NewFromInt(100)
	for _, b := range p.Bonus {
		if _, err := amountField("payment.bonus.min_amount", b.MinAmount, 2); err != nil {
			return err
		}
		pct, ok := ParseDecimal(b.Percent)
		if !ok || pct.GreaterThan(hundred) || Places(pct) > 2 {
			return apperr.Field("payment.bonus.percent", "a percentage between 0 and 100 with at most 2 decimals")
		}
	}
	return nil
}

// sealedPrefix marks a secret stored encrypted with the keyring.
const sealedPrefix = "enc:v1:"

// secretFields lists the payment secrets: name (for errors) and where each lives.
func secretFields(p *Payment) []struct {
	name string
	ptr  *string
} {
	return []struct {
		name string
		ptr  *string
	}{{"payment.epay.key", &p.Epay.Key}, {"payment.stripe.secret_key", &p.Stripe.SecretKey},
		{"payment.stripe.webhook_secret", &p.Stripe.WebhookSecret}}
}

// UseKeyring makes the service store payment secrets encrypted (call before Load). Without one (unit tests of
// this package) they are stored as given.
func (s *Service) UseKeyring(k *secret.Keyring) { s.keys = k }

// Masked returns a copy of st whose payment secrets are masked the way channel keys are (secret.Mask): what
// GET /api/admin/settings shows. Sending a masked value back keeps the stored secret (see keepMasked).
func Masked(st *Settings) *Settings {
	out := *st
	maskAlerts(&out.Alerts)
	maskOAuth(&out.OAuth)
	if out.Captcha.Secret != "" {
		out.Captcha.Secret = secret.Mask(out.Captcha.Secret)
	}
	for _, f := range secretFields(&out.Payment) {
		if *f.ptr != "" {
			*f.ptr = secret.Mask(*f.ptr)
		}
	}
	return &out
}

// keepMasked replaces each payment secret sent back as the mask of the stored one with the stored value. A
// value that looks masked but matches no stored secret is refused: storing "****" would break payments.
func keepMasked(prev, next *Payment) error {
	old := secretFields(prev)
	for i, f := range secretFields(next) {
		stored := *old[i].ptr
		if stored != "" && *f.ptr == secret.Mask(stored) {
			*f.ptr = stored
			continue
		}
		if strings.Contains(*f.ptr, "****") {
			return apperr.Field(f.name, "a masked value that does not match the stored one")
		}
	}
	return nil
}

// sealOptions encrypts the payment secrets of the "payment" option about to be stored.
func (s *Service) sealOptions(next *Settings, key string) (json.RawMessage, error) {
	if key == "oauth" && s.keys != nil {
		o, err := s.sealOAuth(next.OAuth)
		if err != nil {
			return nil, err
		}
		return json.Marshal(o)
	}
	if key == "captcha" {
		c, err := s.sealCaptcha(next.Captcha)
		if err != nil {
			return nil, err
		}
		return json.Marshal(c)
	}
	if key == "alerts" && s.keys != nil {
		a, err := s.sealAlerts(next.Alerts)
		if err != nil {
			return nil, err
		}
		return json.Marshal(a)
	}
	if key != "payment" || s.keys == nil {
		return json.Marshal(field(*next, key))
	}
	p := next.Payment
	p.Presets, p.Bonus = append([]string(nil), p.Presets...), append([]BonusTier(nil), p.Bonus...)
	for _, f := range secretFields(&p) {
		if *f.ptr == "" {
			continue
		}
		sealed, err := s.keys.Encrypt(*f.ptr)
		if err != nil {
			return nil, fmt.Errorf("seal %s: %w", f.name, err)
		}
		*f.ptr = sealedPrefix + sealed
	}
	return json.Marshal(p)
}

// openSecrets decrypts sealed payment secrets after a load. One that does not open (SECRET_KEY changed) is
// dropped with an error in the log: the provider then refuses to work rather than sign with garbage.
func (s *Service) openSecrets(st *Settings) {
	for _, f := range secretFields(&st.Payment) {
		if !strings.HasPrefix(*f.ptr, sealedPrefix) {
			continue
		}
		if s.keys == nil {
			*f.ptr = ""
			continue
		}
		plain, err := s.keys.Decrypt(strings.TrimPrefix(*f.ptr, sealedPrefix))
		if err != nil {
			slog.Error("payment secret does not decrypt with this SECRET_KEY; set it again", "setting", f.name, "err", err)
			plain = ""
		}
		*f.ptr = plain
	}
}
