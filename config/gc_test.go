package config

import (
	"errors"
	"testing"
)

func TestLoad_GCHeadroom(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		name string
		kv   map[string]string
		want int
	}{
		{"default", nil, 48},
		{"set", map[string]string{"GC_HEADROOM_MB": "16"}, 16},
		{"off", map[string]string{"GC_HEADROOM_MB": "0"}, 0},
		{"the operator's GOGC wins", map[string]string{"GOGC": "150", "GC_HEADROOM_MB": "64"}, 0},
	} {
		cfg, err := Load(env(c.kv))
		if err != nil || cfg.GCHeadroomMB != c.want {
			t.Errorf("%s: GCHeadroomMB %d, %v; want %d", c.name, cfg.GCHeadroomMB, err, c.want)
		}
	}
	for _, v := range []string{"-1", "lots", "5000"} {
		_, err := Load(env(map[string]string{"GC_HEADROOM_MB": v}))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Var != "GC_HEADROOM_MB" {
			t.Errorf("GC_HEADROOM_MB=%q: %v", v, err)
		}
	}
}
