package netkey

import "testing"

func TestOf_CountsIPv6ByItsSlash64(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.5":                    "203.0.113.5",
		"::ffff:203.0.113.5":             "203.0.113.5",
		"2001:db8:1:2::1":                "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:1:2:3":        "2001:db8:1:2::/64",
		"fe80::1%eth0":                   "fe80::/64",
		"::1":                            "::/64",
		"not an address":                 "not an address",
		"2001:db8:1:3:0:0:0:1":           "2001:db8:1:3::/64",
		"2001:0db8:0001:0002:0000::0001": "2001:db8:1:2::/64",
	} {
		if got := Of(in); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
}
