// Package archtest keeps the one-way imports of ARCHITECTURE.md §1 honest:
// router → controller | relay → service → model; middleware may use service and model; config and i18n are
// leaves; nothing imports app except main (and test harnesses); web imports nothing of ours.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "tollgate"

// rule forbids packages matching from (a path under the module, "" = the module root) to import any package
// under one of the denied paths; "*" denies every package of the module.
type rule struct {
	from string
	deny []string
	why  string
}

var rules = []rule{
	{"config", []string{"*"}, "config is a leaf"},
	{"i18n", []string{"*"}, "i18n is a leaf"},
	{"web", []string{"*"}, "web embeds the console and imports nothing of ours"},
	{"model", []string{"service", "controller", "router", "relay", "middleware", "app"}, "model is the bottom layer"},
	{"service", []string{"controller", "router", "relay", "middleware", "app"}, "services sit below handlers and the relay"},
	{"middleware", []string{"controller", "router", "relay", "app"}, "middleware may use service and model only"},
	{"controller", []string{"relay", "router", "app"}, "controllers and the relay are siblings under router"},
	{"relay", []string{"controller", "router", "app"}, "the relay and controllers are siblings under router"},
	{"router", []string{"app"}, "only main wires the app"},
}

// under reports whether pkg (relative to the module, "" = root) is dir or inside it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// mayImportApp lists who may import app: main and test harnesses (packages named *test, like app/apptest).
func mayImportApp(pkg string) bool {
	return pkg == "" || strings.HasSuffix(filepath.Base(pkg), "test")
}

// violations returns every wrong-way arrow in imports (package → its module-internal imports, relative paths).
func violations(imports map[string][]string) []string {
	var out []string
	for pkg, deps := range imports {
		for _, dep := range deps {
			if under(dep, "app") && !under(pkg, "app") && !mayImportApp(pkg) {
				out = append(out, fmt.Sprintf("%s → %s: nothing imports app except main and tests", show(pkg), dep))
				continue
			}
			for _, r := range rules {
				if !under(pkg, r.from) {
					continue
				}
				for _, d := range r.deny {
					if d == "*" || under(dep, d) {
						out = append(out, fmt.Sprintf("%s → %s: %s", show(pkg), dep, r.why))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func show(pkg string) string {
	if pkg == "" {
		return module
	}
	return pkg
}

// listed is the part of `go list -json` this test reads.
type listed struct {
	ImportPath string
	Imports    []string
	Dir        string
}

// moduleImports runs `go list -json ./...` at the module root and returns each package's module-internal
// non-test imports, as paths relative to the module ("" for the root package).
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		if strings.HasPrefix(p, module+"/") {
			return strings.TrimPrefix(p, module+"/"), true
		}
		return "", false
	}
	imports := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkg, ok := rel(p.ImportPath)
		if !ok || strings.Contains("/"+pkg+"/", "/node_modules/") {
			continue // Go sources vendored by npm packages are not ours
		}
		deps := []string{}
		for _, imp := range p.Imports {
			if d, ok := rel(imp); ok {
				deps = append(deps, d)
			}
		}
		imports[pkg] = deps
	}
	return imports
}

func TestImports_FollowTheOneWayLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	imports := moduleImports(t)
	// Guard against a vacuous pass: the layers this test is about must have been read.
	for _, want := range []string{"", "app", "config", "i18n", "model", "middleware", "controller", "router", "web",
		"service/account", "service/token", "service/cache", "service/bus"} {
		if _, ok := imports[want]; !ok {
			t.Fatalf("go list did not report package %q (got %d packages)", show(want), len(imports))
		}
	}
	if !contains(imports["controller"], "service/account") || !contains(imports["router"], "controller") {
		t.Fatalf("import lists look wrong: controller → %v, router → %v", imports["controller"], imports["router"])
	}
	for _, v := range violations(imports) {
		t.Error(v)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestViolations_CatchEveryWrongWayArrow(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		bad      bool
	}{
		{"router", "controller", false},
		{"router", "relay", false},
		{"controller", "service/account", false},
		{"controller", "middleware", false},
		{"relay", "service/ledger", false},
		{"relay/adaptor/openai", "relay/convert", false},
		{"service/account", "model", false},
		{"service/account", "service/cache", false},
		{"middleware", "service/apperr", false},
		{"middleware", "model", false},
		{"middleware", "i18n", false},
		{"model", "config", false},
		{"", "app", false},
		{"app", "router", false},
		{"app/apptest", "app", false},
		{"model", "service/account", true},
		{"model", "middleware", true},
		{"service/token", "controller", true},
		{"service/token", "relay/meter", true},
		{"service/account", "middleware", true},
		{"service/ledger", "router", true},
		{"controller", "relay", true},
		{"controller", "router", true},
		{"relay", "controller", true},
		{"relay/adaptor/openai", "router", true},
		{"middleware", "controller", true},
		{"config", "i18n", true},
		{"i18n", "config", true},
		{"web", "config", true},
		{"router", "app", true},
		{"bench", "app", true},
		{"service/channel", "app", true},
	} {
		got := len(violations(map[string][]string{tc.from: {tc.to}})) > 0
		if got != tc.bad {
			t.Errorf("%s → %s: flagged = %v, want %v", show(tc.from), tc.to, got, tc.bad)
		}
	}
}
