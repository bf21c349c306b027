package i18n

import "testing"

func TestCatalog_EveryCodeInBothLanguages(t *testing.T) {
	for code := range catalog[EN] {
		if _, ok := catalog[ZhCN][code]; !ok {
			t.Errorf("code %q has no zh-CN message", code)
		}
	}
	for code := range catalog[ZhCN] {
		if _, ok := catalog[EN][code]; !ok {
			t.Errorf("code %q has no en message", code)
		}
	}
}

func TestNegotiate(t *testing.T) {
	cases := map[string]Lang{
		"":                           EN,
		"zh-CN,zh;q=0.9,en;q=0.8":    ZhCN,
		"en-US,en;q=0.9,zh-CN;q=0.8": EN,
		"fr-FR, zh;q=0.5":            ZhCN,
		"de":                         EN,
		"zh-TW":                      ZhCN,
		"en;q=0.1, zh;q=0.9":         ZhCN,
	}
	for h, want := range cases {
		if got := Negotiate(h); got != want {
			t.Errorf("Negotiate(%q) = %s, want %s", h, got, want)
		}
	}
}

func TestT_FallsBack(t *testing.T) {
	if T(ZhCN, "user_not_found") != "用户不存在。" {
		t.Fatal("zh-CN lookup failed")
	}
	if T(EN, "no_such_code") != "no_such_code" {
		t.Fatal("unknown code must return itself")
	}
	if T(EN, "model_not_found", "x") != `The model "x" does not exist or is not available to you.` {
		t.Fatal("format args")
	}
}
