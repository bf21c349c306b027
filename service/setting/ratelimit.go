package setting

import "tollgate/service/apperr"

// MaxIPRPM bounds the ip_rpm setting (requests per client network per minute on /v1).
const MaxIPRPM = 1_000_000

// validateRateLimits checks the per-IP relay limit.
func validateRateLimits(s *Settings) error {
	if s.IPRPM < 0 || s.IPRPM > MaxIPRPM {
		return apperr.Field("ip_rpm", "requests per minute between 0 and 1000000")
	}
	return nil
}
