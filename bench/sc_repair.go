package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// RepairInput is one argument text the repair scenarios decide, shared
// with the peers module.
type RepairInput struct {
	// Name is the scenario input: "<object>/<quirk>" flattened with '-',
	// e.g. "edit-2KB-trailing_comma" or "small-valid".
	Name string
	// Tool is the tool-call name the arguments belong to.
	Tool string
	// Quirk is the malformation applied ("valid" for none, "leading_text"
	// for a metadata prefix, otherwise scripted.Quirk.String()).
	Quirk string
	// Args is the argument text as the provider sent it.
	Args []byte
	// Want is the valid JSON object the arguments stand for (the text
	// before malformation); empty when Refused.
	Want []byte
	// Refused is set when the text cannot be repaired without inventing
	// content (truncation): ocbench must refuse it.
	Refused bool
	// Entities is set when the strings hold HTML entities, which the xAI
	// path decodes (repair.DecodeEntitiesInJSON) after the repair.
	Entities bool
}

// repairObject is a realistic valid argument object.
type repairObject struct {
	name, tool string
	args       string
}

// repairObjects returns the argument objects the quirks are applied to: a
// 2 KB file edit holding code (quotes, escapes, tabs, angle brackets,
// ampersands, a boolean and a null outside strings) and a small read call
// (numbers, a boolean, a null, a pattern with quotes, '<', '>' and '&').
func repairObjects() []repairObject {
	code := func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "func (d *Decoder) step%d(p []byte) (int, error) {\n\tif len(p) < %d && d.state != \"done\" {\n\t\treturn 0, fmt.Errorf(\"short read: %%q <%%d> & more\", p, len(p))\n\t}\n\treturn d.emit(`raw\\n`, p[%d:]), nil\n}\n", i, i+3, i%5)
		}
		return b.String()[:n]
	}
	var edit []byte
	edit = append(edit, `{"path":"internal/stream/decoder.go","old_string":`...)
	edit = llm.AppendJSONString(edit, code(800))
	edit = append(edit, `,"new_string":`...)
	edit = llm.AppendJSONString(edit, code(900))
	edit = append(edit, `,"replace_all":false,"expected_replacements":null,"dry_run":true}`...)
	small := `{"path":"docs/README.md","offset":10,"limit":40,"follow_symlinks":true,"encoding":null,"grep":"a < b && c > \"d\""}`
	return []repairObject{
		{"edit-2KB", "edit", string(edit)},
		{"small", "read", small},
	}
}

// repairQuirks are the malformations measured, in the catalogue's order;
// "leading_text" is a metadata prefix (as some models emit
// "functions.NAME:0 " before the object), "truncate" is refused.
var repairQuirks = []scripted.Quirk{
	scripted.QuirkTrailingComma, scripted.QuirkFence, scripted.QuirkDoubleEncode, scripted.QuirkPython,
	scripted.QuirkSingleQuotes, scripted.QuirkConcat, scripted.QuirkHTMLEntities, scripted.QuirkNone,
	scripted.QuirkTruncate,
}

// RepairInputs returns every argument text of the repair scenarios: each
// object valid, then under each quirk.
func RepairInputs() []RepairInput {
	var out []RepairInput
	for _, o := range repairObjects() {
		out = append(out, RepairInput{Name: o.name + "-valid", Tool: o.tool, Quirk: "valid", Args: []byte(o.args), Want: []byte(o.args)})
		for _, q := range repairQuirks {
			in := RepairInput{Tool: o.tool, Want: []byte(o.args)}
			switch q {
			case scripted.QuirkNone:
				in.Quirk = "leading_text"
				in.Args = []byte("functions." + o.tool + ":0 " + o.args)
			default:
				in.Quirk = q.String()
				in.Args = []byte(scripted.Malform(o.args, q))
			}
			switch q {
			case scripted.QuirkTruncate:
				in.Refused, in.Want = true, nil
			case scripted.QuirkHTMLEntities:
				in.Entities = true
			}
			in.Name = o.name + "-" + in.Quirk
			out = append(out, in)
		}
	}
	return out
}

// RepairOurs is ocbench's decision on in under the extended profile,
// appended to dst: repair.Extended, then entity decoding where the input
// carries HTML entities (the xAI path).
func RepairOurs(dst []byte, in *RepairInput, scratch []byte) (out, scratchOut []byte, err error) {
	if !in.Entities {
		out, _, err = repair.Extended(dst, in.Args, []byte(in.Tool))
		return out, scratch, err
	}
	scratch, _, err = repair.Extended(scratch[:0], in.Args, []byte(in.Tool))
	if err != nil {
		return dst, scratch, err
	}
	return repair.DecodeEntitiesInJSON(dst, scratch), scratch, nil
}

// SameJSON reports whether a and b are valid JSON texts of equal value.
func SameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// checkRepaired fails when ours decided in wrongly.
func checkRepaired(in *RepairInput, out []byte, err error) error {
	if in.Refused {
		if !errors.Is(err, repair.ErrTruncated) {
			return fmt.Errorf("%s: want ErrTruncated, got %v (%d bytes)", in.Name, err, len(out))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	if !SameJSON(out, in.Want) {
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
	for _, o := range repairObjects() {
		args := []byte(o.args)
		scs = append(scs, Scenario{
			Name: "validate/" + o.name, Stage: "validate", Input: o.name, Impl: Ours, Bytes: int64(len(args)),
			Setup: func() (func() error, func(), error) {
				bad := scripted.Malform(o.args, scripted.QuirkTrailingComma)
				if repair.Valid([]byte(bad)) {
					return nil, nil, fmt.Errorf("validate/%s: repair.Valid accepts a trailing comma", o.name)
				}
				return func() error {
					if !repair.Valid(args) {
						return fmt.Errorf("validate/%s: repair.Valid rejects valid arguments", o.name)
					}
					return nil
				}, nil, nil
			},
		})
	}
	for _, in := range RepairInputs() {
		scs = append(scs, Scenario{
			Name: "repair/" + in.Name, Stage: "repair", Input: in.Name, Impl: Ours, Bytes: int64(len(in.Args)),
			Setup: func() (func() error, func(), error) {
				dst := make([]byte, 0, 2*len(in.Args)+64)
				scratch := make([]byte, 0, 2*len(in.Args)+64)
				first := true
				return func() error {
					var err error
					dst, scratch, err = RepairOurs(dst[:0], &in, scratch)
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
					case !extracted || !SameJSON(dst, in.Want):
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
	for _, in := range RepairInputs() {
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
