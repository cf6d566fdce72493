package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// checkRepaired fails when ours decided in wrongly.
func checkRepaired(in *peerdata.RepairInput, out []byte, err error) error {
	if in.Refused {
		if !errors.Is(err, repair.ErrTruncated) {
			return fmt.Errorf("%s: want ErrTruncated, got %v (%d bytes)", in.Name, err, len(out))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	if !peerdata.SameJSON(out, in.Want) {
		return fmt.Errorf("%s: repaired arguments differ from the original object", in.Name)
	}
	if in.Quirk == "valid" && !bytes.Equal(out, in.Want) {
		return fmt.Errorf("%s: valid arguments not kept byte for byte", in.Name)
	}
	return nil
}

// openClawDecide is ProfileOpenClaw's final decision on a whole argument
// text: OpenClaw's extraction where it succeeds, otherwise pi-ai's parse.
func openClawDecide(dst, raw, tool []byte) ([]byte, bool) {
	if out, _, _, _, ok := repair.OpenClawExtract(dst, raw, tool); ok {
		return out, true
	}
	out, _ := repair.PiParse(dst, raw)
	return out, false
}

func repairScenarios() ([]Scenario, error) {
	var scs []Scenario
	// The validity check that decides the fast path, alone.
	for _, in := range peerdata.RepairInputs() {
		if in.Quirk != "valid" {
			continue
		}
		name, args := strings.TrimSuffix(in.Name, "-valid"), in.Args
		scs = append(scs, Scenario{
			Name: "validate/" + name, Stage: "validate", Input: name, Impl: Ours, Bytes: int64(len(args)),
			Setup: func() (func() error, func(), error) {
				bad := scripted.Malform(string(args), scripted.QuirkTrailingComma)
				if repair.Valid([]byte(bad)) {
					return nil, nil, fmt.Errorf("validate/%s: repair.Valid accepts a trailing comma", name)
				}
				return func() error {
					if !repair.Valid(args) {
						return fmt.Errorf("validate/%s: repair.Valid rejects valid arguments", name)
					}
					return nil
				}, nil, nil
			},
		})
	}
	for _, in := range peerdata.RepairInputs() {
		scs = append(scs, Scenario{
			Name: "repair/" + in.Name, Stage: "repair", Input: in.Name, Impl: Ours, Bytes: int64(len(in.Args)),
			Setup: func() (func() error, func(), error) {
				dst := make([]byte, 0, 2*len(in.Args)+64)
				scratch := make([]byte, 0, 2*len(in.Args)+64)
				first := true
				return func() error {
					var err error
					dst, scratch, err = peerdata.RepairOurs(dst[:0], &in, scratch)
					if first {
						first = false
						return checkRepaired(&in, dst, err)
					}
					if err != nil && !in.Refused {
						return err
					}
					return nil
				}, nil, nil
			},
		})
		// OpenClaw's profile on what it handles itself (valid, a
		// metadata prefix) and on a cut, which pi-ai's parse closes.
		if in.Quirk != "valid" && in.Quirk != "leading_text" && !in.Refused {
			continue
		}
		scs = append(scs, Scenario{
			Name: "repair-openclaw/" + in.Name, Stage: "repair-openclaw", Input: in.Name, Impl: Ours, Bytes: int64(len(in.Args)),
			Setup: func() (func() error, func(), error) {
				dst := make([]byte, 0, 2*len(in.Args)+64)
				tool := []byte(in.Tool)
				first := true
				return func() error {
					var extracted bool
					dst, extracted = openClawDecide(dst[:0], in.Args, tool)
					if !first {
						return nil
					}
					first = false
					switch {
					case in.Refused:
						if extracted || !json.Valid(dst) || len(dst) == 0 || dst[0] != '{' {
							return fmt.Errorf("%s: openclaw: cut arguments not closed into an object by pi-ai's parse: %q", in.Name, dst)
						}
					case !extracted || !peerdata.SameJSON(dst, in.Want):
						return fmt.Errorf("%s: openclaw: arguments not extracted as the original object", in.Name)
					}
					return nil
				}, nil, nil
			},
		})
	}
	return scs, nil
}

// DefaultRepairQuirks are the repair inputs a default run measures (with
// and without OpenClaw's profile, on both objects): no malformation, the
// commonest (a trailing comma, single quotes), text before the object and a
// cut-off object. The other quirks run with --all or a --filter.
var DefaultRepairQuirks = []string{"valid", "trailing_comma", "single_quotes", "leading_text", "truncate"}

// DefaultSelection matches, by exact name, the scenarios of scs a default
// run measures (and so the peer benchmarks compared with them): every
// stage, the repair stages only on DefaultRepairQuirks.
func DefaultSelection(scs []Scenario) *regexp.Regexp {
	other := map[string]bool{}
	for _, in := range peerdata.RepairInputs() {
		if !slices.Contains(DefaultRepairQuirks, in.Quirk) {
			other[in.Name] = true
		}
	}
	var names []string
	for _, sc := range scs {
		if strings.HasPrefix(sc.Stage, "repair") && other[sc.Input] {
			continue
		}
		names = append(names, regexp.QuoteMeta(sc.Name))
	}
	return regexp.MustCompile("^(?:" + strings.Join(names, "|") + ")$")
}
