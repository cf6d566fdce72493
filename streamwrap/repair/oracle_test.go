package repair

import (
	"testing"
)

func TestOracleOpenClawExtract(t *testing.T) {
	fails := 0
	for _, r := range loadOracle(t) {
		out, kind, lead, trail, ok := OpenClawExtract(nil, []byte(r.In), []byte(r.Tool))
		want := r.OC != nil
		bad := ok != want
		if !bad && ok {
			bad = kind.String() != r.OC.Kind || lead != r.OC.Lead || trail != r.OC.Trail || !sameJSON(t, out, r.OC.Args)
		}
		if bad {
			fails++
			if fails <= 15 {
				if want {
					t.Errorf("OpenClawExtract(%q, %q) = %s %v %d %d %v, want %s %s %d %d", r.In, r.Tool, out, kind, lead, trail, ok, r.OC.Args, r.OC.Kind, r.OC.Lead, r.OC.Trail)
				} else {
					t.Errorf("OpenClawExtract(%q, %q) = %s %v %d %d, want failure", r.In, r.Tool, out, kind, lead, trail)
				}
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d mismatches", fails)
	}
}

func TestOraclePiParse(t *testing.T) {
	fails := 0
	for _, r := range loadOracle(t) {
		out, how := PiParse(nil, []byte(r.In))
		if how.String() != r.PiHow || !sameJSON(t, out, []byte(r.Pi)) {
			fails++
			if fails <= 15 {
				t.Errorf("PiParse(%q) = %s %v, want %s %s", r.In, out, how, r.Pi, r.PiHow)
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d mismatches", fails)
	}
}

func TestOracleDecodeHTMLEntities(t *testing.T) {
	fails := 0
	for _, r := range loadOracle(t) {
		out := DecodeHTMLEntities(nil, []byte(r.In))
		if string(out) != r.Ent {
			fails++
			if fails <= 15 {
				t.Errorf("DecodeHTMLEntities(%q) = %q, want %q", r.In, out, r.Ent)
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d mismatches", fails)
	}
}
