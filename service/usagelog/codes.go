package usagelog

import "strings"

// ClassCode is the generic error code of a failure class (health's class names), with an i18n message a
// user's log can show: the relay stores it on an error row that has no code of its own, and the log view
// derives it for rows written before codes were stored. "" (no upstream failure: a refusal of the gateway's
// own after admission) is request_failed.
func ClassCode(class string) string {
	switch {
	case class == "":
		return "request_failed"
	case class == "canceled":
		return "client_canceled"
	case strings.HasPrefix(class, "upstream_"):
		return class
	}
	return "upstream_" + class
}
