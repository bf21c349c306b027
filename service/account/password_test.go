package account

import "testing"

func TestPasswordPolicy_ShipsTheTenThousandMostCommonPasswords(t *testing.T) {
	p := newPasswordPolicy()
	if len(p.common) != 10_000 {
		t.Fatalf("common passwords = %d, want 10000", len(p.common))
	}
	for _, c := range []struct {
		user, pw, want string
	}{
		{"alice", "password1", weakCommon},
		{"alice", "Password1", weakCommon},
		{"alice", "trustno1", weakCommon},
		{"alice", "xx-ALICE-99", weakUsername},
		{"alice", "short1", weakShape},
		{"alice", "onlyletters", weakShape},
		{"alice", "secret123", ""},
		{"alice", "tram-lines-42", ""},
	} {
		err := p.check("password", c.user, c.pw)
		got := ""
		if err != nil {
			got = err.(interface{ MessageKey() string }).MessageKey()
		}
		if got != c.want {
			t.Errorf("check(%q, %q) = %q, want %q", c.user, c.pw, got, c.want)
		}
	}
}

func TestLoginDelay_GrowsAndIsCapped(t *testing.T) {
	want := map[int64]int64{1: 0, 3: 0, 4: 1, 5: 2, 6: 4, 8: 16, 9: 30, 50: 30, 1 << 40: 30}
	for n, secs := range want {
		if got := loginDelay(n).Milliseconds() / 1000; got != secs {
			t.Errorf("loginDelay(%d) = %ds, want %ds", n, got, secs)
		}
	}
}
