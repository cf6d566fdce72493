package repair

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// specCase is one row of ../../testdata/spec/streamwrap-cases.json.
type specCase struct {
	Wrapper  string          `json:"wrapper"`
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	Input    json.RawMessage `json:"input"`
	Expected []struct {
		Path   string          `json:"path"`
		Equals json.RawMessage `json:"equals"`
	} `json:"expected"`
}

func loadSpecCases(t *testing.T, wrappers ...string) []specCase {
	t.Helper()
	b, err := os.ReadFile("../../testdata/spec/streamwrap-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var all []specCase
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var out []specCase
	for _, c := range all {
		for _, w := range wrappers {
			if c.Wrapper == w {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestSpecRepairCases replays the argument-repair stream cases through
// OpenClawShouldTry and OpenClawExtract with OpenClaw's per-index state
// (trigger, stored repair, pre-existing arguments, reset to {} on failure)
// and checks the final arguments of the live block and the toolcall_end
// block.
func TestSpecRepairCases(t *testing.T) {
	cases := loadSpecCases(t, "wrapStreamFnRepairMalformedToolCallArguments")
	if len(cases) < 15 {
		t.Fatalf("only %d repair cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Objects map[string]struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"objects"`
				Calls []struct {
					Events []struct {
						Type         string `json:"type"`
						ContentIndex int    `json:"contentIndex"`
						Delta        string `json:"delta"`
					} `json:"events"`
				} `json:"calls"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			args := map[string][]byte{}
			for k, o := range in.Objects {
				args[k] = o.Arguments
			}
			name := []byte(in.Objects["PTC"].Name)
			var buf, repair []byte
			preexisting := false
			meaningful := func(a []byte) bool { return len(a) > 2 && !sameJSON(t, a, []byte("{}")) }
			endSeen := false
			for _, ev := range in.Calls[0].Events {
				switch ev.Type {
				case "toolcall_delta":
					buf = append(buf, ev.Delta...)
					hadRepair := repair != nil
					if !OpenClawShouldTry([]byte(ev.Delta), buf, hadRepair) {
						continue
					}
					out, kind, _, _, ok := OpenClawExtract(nil, buf, name)
					if ok {
						if kind == KindNone {
							t.Fatal("ok with KindNone")
						}
						if !hadRepair && meaningful(args["PTC"]) {
							preexisting = true
						}
						repair = out
						args["PTC"] = out
					} else {
						repair = nil
						if !(preexisting || (!hadRepair && meaningful(args["PTC"]))) {
							args["PTC"] = []byte("{}")
						}
					}
				case "toolcall_end":
					endSeen = true
					if repair != nil {
						args["STC"], args["PTC"], args["ETC"] = repair, repair, repair
					}
				}
			}
			if endSeen && repair != nil {
				args["FTC"] = repair
			}
			// The superset rule on the case's final argument text.
			if oc, _, _, _, ok := OpenClawExtract(nil, buf, name); ok {
				if got, _, err := checkExtended(t, buf, name); err != nil || !sameJSON(t, got, oc) {
					t.Errorf("Extended(%q) = %s %v; OpenClaw %s", buf, got, err, oc)
				}
			}
			for _, e := range c.Expected {
				key, ok := strings.CutPrefix(e.Path, "objects.")
				if !ok || !strings.HasSuffix(key, ".arguments") {
					continue
				}
				key = strings.TrimSuffix(key, ".arguments")
				if !sameJSON(t, args[key], e.Equals) {
					t.Errorf("%s = %s, want %s", e.Path, args[key], e.Equals)
				}
			}
		})
	}
}

// TestSpecDecodeCases runs decodeHtmlEntitiesInObject's unit cases through
// DecodeEntitiesInJSON.
func TestSpecDecodeCases(t *testing.T) {
	n := 0
	for _, c := range loadSpecCases(t, "wrapStreamFnDecodeXaiToolCallArguments", "decodeHtmlEntitiesInObject") {
		var in struct {
			Fn   string            `json:"fn"`
			Args []json.RawMessage `json:"args"`
		}
		if c.Kind != "unit" || json.Unmarshal(c.Input, &in) != nil || in.Fn != "decodeHtmlEntitiesInObject" {
			continue
		}
		n++
		got := DecodeEntitiesInJSON(nil, in.Args[0])
		if !Valid(got) {
			t.Errorf("%s: invalid JSON %s", c.Name, got)
		}
		for _, e := range c.Expected {
			if e.Path == "return" && !sameJSON(t, got, e.Equals) {
				t.Errorf("%s: DecodeEntitiesInJSON(%s) = %s, want %s", c.Name, in.Args[0], got, e.Equals)
			}
		}
	}
	if n < 7 {
		t.Fatalf("only %d decode cases", n)
	}
}
