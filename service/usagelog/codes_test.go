package usagelog

import (
	"testing"

	"tollgate/i18n"
	"tollgate/service/health"
)

// Every failure class turns into a code the user's log can say in words, in both languages.
func TestClassCode_EveryClassHasAMessage(t *testing.T) {
	classes := []health.Class{health.ClassSuccess, health.ClassRateLimited, health.ClassAuth, health.ClassUpstreamQuota,
		health.ClassServer, health.ClassTimeout, health.ClassReset, health.ClassClient, health.ClassModelUnsupported,
		health.ClassBadReply, health.ClassCanceled}
	for _, c := range classes {
		code := ClassCode(string(c))
		if !i18n.Has(code) {
			t.Errorf("class %q → code %q has no catalog message", c, code)
			continue
		}
		for _, lang := range []i18n.Lang{i18n.EN, i18n.ZhCN} {
			if msg := i18n.T(lang, code); msg == code || msg == "" {
				t.Errorf("class %q → code %q has no %s message", c, code, lang)
			}
		}
	}
}
