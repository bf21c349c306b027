package channel

import (
	"errors"
	"strings"
	"testing"

	"tollgate/service/apperr"
	"tollgate/service/secret"
)

func TestUnmaskHeaders_MaskKeepsStoredValue_ForeignMaskOrLineBreakRefused(t *testing.T) {
	old := map[string]string{"Authorization": "Bearer sk-live-0123456789", "X-Short": "abc"}
	cases := []struct {
		name string
		in   map[string]string
		want map[string]string // nil: refused
	}{
		{"masks kept", map[string]string{"Authorization": secret.Mask(old["Authorization"]), "X-Short": "****"}, old},
		{"name case differs", map[string]string{"authorization": secret.Mask(old["Authorization"])},
			map[string]string{"authorization": old["Authorization"]}},
		{"new clear value", map[string]string{"Authorization": "Bearer new"}, map[string]string{"Authorization": "Bearer new"}},
		{"mask of another value", map[string]string{"Authorization": "Bear****zzzz"}, nil},
		{"mask of a header never stored", map[string]string{"X-New": "****"}, nil},
		{"line break", map[string]string{"X-New": "a\r\nX-Injected: 1"}, nil},
	}
	for _, c := range cases {
		got, err := unmaskHeaders(c.in, old)
		if c.want == nil {
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Field != "header_override" {
				t.Errorf("%s: got %v, %v; want a header_override field error", c.name, got, err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%s: got %v, %v; want %v", c.name, got, err, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.name, k, got[k], v)
			}
		}
	}
}

func TestSealedHeaders_OpenBack_ClearLegacyValuesPassThrough(t *testing.T) {
	keys, err := secret.New("test-secret-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{keys: keys}
	sealed, err := s.sealHeaders(map[string]string{"X-Org": "org-credential"})
	if err != nil || !strings.HasPrefix(sealed["X-Org"], sealedPrefix) || strings.Contains(sealed["X-Org"], "org-credential") {
		t.Fatalf("sealed = %v, %v", sealed, err)
	}
	sealed["X-Legacy"] = "clear-from-an-old-release"
	sealed["X-Broken"] = sealedPrefix + "not-a-sealed-value"
	got := s.openHeaders(1, sealed)
	if got["X-Org"] != "org-credential" || got["X-Legacy"] != "clear-from-an-old-release" || len(got) != 2 {
		t.Fatalf("opened = %v (a value that does not decrypt is dropped, never sent sealed)", got)
	}
}
