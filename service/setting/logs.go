package setting

import "tollgate/service/apperr"

// MaxLogRetentionDays bounds the log_retention_days setting (about 100 years).
const MaxLogRetentionDays = 36500

// validateLogRetention checks how long usage log rows are kept.
func validateLogRetention(s *Settings) error {
	if s.LogRetentionDays < 0 || s.LogRetentionDays > MaxLogRetentionDays {
		return apperr.Field("log_retention_days", "days between 0 (keep forever) and 36500")
	}
	if s.RoutingDecisionSample < 1 || s.RoutingDecisionSample > 1_000_000 {
		return apperr.Field("routing_decision_sample", "1 (every request) … 1000000")
	}
	if s.RoutingDecisionRetentionDays < 1 || s.RoutingDecisionRetentionDays > 3650 {
		return apperr.Field("routing_decision_retention_days", "days between 1 and 3650")
	}
	return nil
}
