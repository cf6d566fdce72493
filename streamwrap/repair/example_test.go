package repair_test

import (
	"errors"
	"fmt"

	"github.com/ocbench/ocbench/streamwrap/repair"
)

func ExampleExtended() {
	dst := make([]byte, 0, 256) // reuse across calls: no allocation on valid input
	for _, raw := range []string{
		`{"path":"a.txt"}`,                    // valid: returned byte for byte
		"```json\n{'path': 'a.txt',}\n```",    // fenced, single quotes, trailing comma
		`.functions.read:0 {"path":"a.txt"}x`, // OpenClaw's metadata prefix and suffix
		`{"path":"a.txt","content":"package`,  // cut by the stream: refused
		`[1,2]`,                               // not an object
	} {
		out, res, err := repair.Extended(dst[:0], []byte(raw), []byte("read"))
		var e *repair.Error
		switch {
		case errors.Is(err, repair.ErrTruncated):
			fmt.Println("truncated")
		case errors.As(err, &e):
			fmt.Println("unrepairable:", e.Kind)
		default:
			fmt.Printf("%s [%s]\n", out, res.Fixes)
		}
	}
	// Output:
	// {"path":"a.txt"} []
	// {"path": "a.txt"} [code-fence,trailing-comma,single-quote]
	// {"path":"a.txt"} [leading-text,trailing-text]
	// truncated
	// unrepairable: not-object
}

func ExampleDecodeHTMLEntities() {
	in := []byte(`source .env &amp;&amp; psql &quot;$DB&quot; -c &lt;q&gt; &amp;amp; &#x27;x&#x27; &#xD800;`)
	fmt.Printf("%s\n", repair.DecodeHTMLEntities(nil, in))
	// Output:
	// source .env && psql "$DB" -c <q> &amp; 'x' &#xD800;
}

func ExampleDecodeEntitiesInJSON() {
	args := []byte(`{"command":"a &amp;&amp; b","n":1,"tags":["&lt;x&gt;"]}`)
	fmt.Printf("%s\n", repair.DecodeEntitiesInJSON(nil, args))
	// Output:
	// {"command":"a && b","n":1,"tags":["<x>"]}
}

func ExamplePiParse() {
	// pi-ai closes what the stream cut (ProfileOpenClaw executes this).
	out, how := repair.PiParse(nil, []byte(`{"path":"a.txt","content":"pack`))
	fmt.Printf("%s %s\n", out, how)
	// Output:
	// {"path":"a.txt","content":"pack"} partial
}

func ExampleOpenClawExtract() {
	buf := []byte(`.functions.read:0 {"path":"/tmp/report.txt"}x`)
	if repair.OpenClawShouldTry([]byte(`}x`), buf, false) {
		out, kind, lead, trail, ok := repair.OpenClawExtract(nil, buf, []byte("read"))
		fmt.Printf("%s %s %d %d %v\n", out, kind, lead, trail, ok)
	}
	// Output:
	// {"path":"/tmp/report.txt"} repaired 17 1 true
}
