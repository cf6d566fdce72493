package peerdata

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// RepairInput is one argument text the repair scenarios and the repair
// peers decide.
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
