// Command gencorpus writes the input corpus for the differential tests of
// package repair: the argument texts of the spec's repair cases, the
// real-world quirks of wire-and-cache.md §1.5, and deterministic mutations
// of a set of valid objects. The expected outputs are recorded next to the
// inputs by running OpenClaw 2026.9.6's and pi-ai 0.73.1's own functions
// over this file (see testdata/README.md); the test then compares.
//
// Usage (from streamwrap/repair): go run ./internal/gencorpus > /tmp/corpus.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"unicode/utf8"
)

var extraAlphabet []string

type row struct {
	In   string `json:"in"`
	Tool string `json:"tool"`
}

var (
	rows []row
	seen = map[string]bool{}
)

func add(tool, s string) {
	if !utf8.ValidString(s) || seen[tool+"\x00"+s] || len(s) > 4096 {
		return
	}
	seen[tool+"\x00"+s] = true
	rows = append(rows, row{In: s, Tool: tool})
}

var bases = []string{
	`{"path":"/tmp/report.txt"}`,
	`{"path":"a.txt","offset":5,"limit":20}`,
	`{"command":"ls -la && echo \"done\"","workdir":"/tmp","timeoutMs":1000}`,
	`{"a":1,"b":[1,2,{"c":"}]"}],"d":{"e":null,"f":true,"g":false}}`,
	`{"path":"notes/日志.md","content":"包含“内部”与 **重点** 字样"}`,
	`{"s":"line\nnext \"q\" \\ \/ \u2713 \ud83d\ude00"}`,
	`{"edits":[{"oldText":"a","newText":"b"},{"oldText":"c","newText":"d"}],"path":"x.go"}`,
	`{"n":-12.5e+3,"m":0,"k":[],"o":{}}`,
	`{}`,
	`{"x":"{\"inner\":1}"}`,
	` {"padded": "yes"} `,
	`{"query":"Rock &amp; Roll &#65; &#x27;hex&#x27;"}`,
}

var prefixes = []string{
	"", ".functions.read:0 ", "functions.read:3 ", "functions.exec:0", "tool: ", "tools/", "Function.write ",
	"please use ", "```json\n", "`", "'x' ", "\"name\" ", ":", "-", " \u00a0", "functions:", "functionshell ",
	"toolbox.read ", "call ", strings.Repeat("f", 97) + " ", "f" + strings.Repeat("x", 94) + " ", "x {",
}

var suffixes = []string{
	"", "x", "}x", "xx", "oops", "```", "\n```", " \n", "]", "}", "😀", "ab😀", ",", "\"", ":", "a b", ")", ";;;",
}

var quirks = []string{
	// Q4 double-encoded.
	`"{\"shop_name\": \"A店\", \"start_date\": \"2025-03-23\", \"end_date\": \"2025-03-23\"}"`,
	`"\"{ \\\"date\\\": \\\"2026\\\" }\""`,
	`{ "commands": "[\"build --select int_engagement__org_team_expansion+\"]" }`,
	`"{ \"n\": 2 }"`,
	`"{\"path\":\"/tmp/a\"}"`,
	// Q5 trailing commas / relaxed JSON.
	`{"path":"internal/stream/decoder.go","line":42,"tags":["sse","json",],}`,
	`{"path":"/tmp/a",}`,
	`{"table_name":"t_purchase_invoice","direction":both}`,
	`{"id":cf56856a-5b7f-47aa-9877-8f45d1d2c1ee,"x":1}`,
	"{\"command\": \"view\", \"path\": \"/x/query.py\", \"view_range\": \\n[2142, 2250]\\n\\n}",
	`{{tool:"X",a:1}}`,
	`{"s":"\u6수"}`,
	// Q6 truncated.
	`{"command":"go test ./... -run TestDecoder","timeout_ms":120000,"env":{"GOFLAGS":"-count=1"`,
	"{\"path\":\"a.go\",\"content\":\"package main\\n\\nfunc main() {\\n\\tprintln(\\\"hi",
	`{"items": [1, 2, 3`,
	`{"city": INVALID_VALUE}`,
	// Q7 concatenated.
	`{"args": "{\"flag\": true}"}{"args": "{\"box\": \"A\", \"flag\": true, \"limit\": 50}"}{"args": "{\"since\": \"01-Jan-2025\", \"flag\": true}"}`,
	`{"city": "Seattle", "state": "WA", "unit": "celsius"}{"city": "Seattle", "state": "WA", "unit": "celsius"}`,
	`{{"city": "Orlando", "state": "FL"}`,
	`{"city":"北京"}{"city":"上海"}{"city":"广州"}`,
	`{"a":1}{"b":2}`,
	`{"a":1} {"a":1}`,
	`{"a":1}` + "\n" + `{"a":1}`,
	// Q8 code fences.
	"```json\n{\"city\":\"paris\"}\n```",
	"```json\n{\"path\": \"a.txt\"}\n```",
	`{"path": "a.txt"} trailing text`,
	"```\n{\"a\":\"x```y\"}\n```",
	"```JSON\n{\"a\":1}```",
	// Q9 Python literals and single quotes.
	`{'filePath': '/src/store/search/search.constant.js'}`,
	`{'path': 'main.go', 'content': 'package main', 'overwrite': true}`,
	`{"paths": ['app.py', "b.py"]}`,
	`{'theme': 'dark', 'size': 14}`,
	`{"a": True, "b": False, "c": None}`,
	`{'a': True, 'b': 'it\'s', 'c': "say \"hi\"", 'd': None}`,
	`{"s": "True False None", 'k': [None, True]}`,
	// Q10 empty / null.
	``, `null`, `"null"`, ` `, `{}`, `[]`, `[{"path":"/tmp/a"}]`, `1`, `"x"`, `true`,
	// Control characters and escapes (pi-ai's repair stage).
	"{\"a\":\"line1\nline2\ttab\"}",
	`{"p":"C:\new\dir\x"}`,
	`{"a":"\d\s\w"}`,
	`{"a":"\u12"}`,
	`{"a":"x\`,
	"{\"a\":\"\x01\x1f\"}",
	// partial-json corners.
	`{"a":1 "b":2}`, `{"a":[ ],"b":1}`, `{"a":{"b":x},"c":1}`, `[1,2`, `{"a":"b`, `{"a":tru`, `{"a":nu`,
	`{"a":-`, `{"a":1.`, `{"a":1e`, `{"a":-Inf`, `{"a":NaN}`, `{"a":Infinity}`, `12abc`, `-`, `{a:1}`,
	`{"__proto__":{"x":1},"y":2}`, `{"a":1,"a":2}`, `{"k":"v"}}`, `{"k":"v"]`, `{"k":["v"}`,
}

// Smart-quote variants.
var smart = []string{
	`{“path”:“safe.txt”}`,
	`{“path”:“safe.txt”,“offset”:5,“limit”:20}`,
	`{“command“:“pwd“,“workdir“:“/tmp“}`,
	`{“path”:“safe.txt”,“content”:“text ”, “path”: “other.txt””}`,
	`{“pattern”:“Use ”, “limit”: “bar” in prose”,“path”:“safe.txt”}`,
	`{"path":"safe.txt","content":“Use ”, “foo”: “bar” in prose”}`,
	`{“path”:“safe.txt”,“content”:“line\nnext \"quoted\" path C:\\tmp mark \u2713 invalid \d”}`,
	`{“path”:“notes/报告.md”,“edits”:[{“oldText”:“旧的 **草稿**”,“newText”:“更新 \"草稿\"\nnext”},{“oldText”:“tail”,“newText”:“done”}]}`,
	`{“old_str”:“a”, “new_str”:“b”}`,
	`{“old_str”:“a”, “path”:“b”}`,
	`{“path”:“a”, “path”:“b”}`,
	`{„path‟:„x‟}`,
	`{“path”:“a”,}`,
	`{“n”: [1, 2], “m”: {"x": 1}, “k”: true}`,
	`{“path”:“a”`,
	`{“a”:“x\u0041\ud83d\ude00\ud800”}`,
	`{“__proto__”:“x”,“a”:1}`,
	`{“constructor”:“x”, “path”:“y”}`,
	`{“content”:“x”, “constructor”: “y”}`,
}

var entities = []string{
	"source .env &amp;&amp; psql &quot;$DB&quot; -c &lt;query&gt;",
	"&#39;hello&#39; &#x27;world&#x27; &#X41; &#65 &#;&#x;&#xg;",
	"&amp;amp; &amp &AMP; &copy; &unknownentity; &Amp; &aMp; &QUOT; &Apos; &APOS; &LT; &gT;",
	"bad &#x110000; and &#9999999999; &#xD800; &#55296; &#0; &#x10FFFF; &#1114111;",
	"&notin; &notit; &not; &NotEqualTilde; &nGt; &CounterClockwiseContourIntegral; &a; &a1; &1a;",
	"&& &;&#&#x &amp &amp ; &ampamp; &&amp; &#x0000000041; &#00065;",
	"&NewLine;&Tab;&nbsp;&lt;&#10;",
}

func main() {
	seed := flag.Uint64("seed", 1, "mutation seed")
	muts := flag.Int("mutations", 2500, "number of random mutations")
	only := flag.Bool("only-mutations", false, "write only the random mutations")
	extra := flag.Bool("extra-alphabet", false, "mutate with more unusual tokens too")
	flag.Parse()
	if *extra {
		extraAlphabet = []string{"\u00a0", "😀", "-Infinity", "NaN", "Inf", "\\", "\\u12", "\\x", "&#x", "&#1", "&lt", ";", "\t", "functions.", "tool:", "\u201e", "\u201f", "'", "`", "nu", "tr", "fa", "e-", "0.", "{}", "[]", "\"\":"}
	}
	run(*seed, *muts, *only)
}

func run(seed uint64, mutations int, onlyMutations bool) {
	if !onlyMutations {
		fixedRows()
	}
	mutate(seed, mutations)
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rows); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, len(rows), "rows")
}

// fixedRows adds the spec inputs, the quirks and their combinations.
func fixedRows() {
	for _, b := range bases {
		for _, p := range prefixes {
			for _, s := range suffixes {
				add("read", p+b+s)
			}
		}
		// Every strict prefix (truncation).
		for i := 1; i < len(b); i++ {
			add("", b[:i])
		}
	}
	for _, q := range quirks {
		add("", q)
		add("read", ".functions.read:0 "+q)
		add("", q+"x")
	}
	for _, s := range smart {
		for _, tool := range []string{"read", "Read", "write", "grep", "functions.read", ""} {
			add(tool, s)
		}
		for _, p := range prefixes[:8] {
			add("", p+s)
			add("grep", p+s+"x")
		}
		for i := 1; i < len(s); i++ {
			if utf8.ValidString(s[:i]) {
				add("read", s[:i])
			}
		}
	}
	for _, e := range entities {
		add("", e)
		add("", `{"q":"`+strings.ReplaceAll(e, `"`, `\"`)+`"}`)
	}
}

// mutate adds n deterministic random mutations of the bases and quirks.
func mutate(seed uint64, mutations int) {
	rng := rand.New(rand.NewPCG(seed, 2))
	alpha := append(extraAlphabet, []string{"{", "}", "[", "]", `"`, "'", ":", ",", `\`, " ", "\n", "x", "1", "“", "”", "True", "None", "```", "&amp;", "e", "-"}...)
	src := append(append([]string{}, bases...), quirks...)
	src = append(src, smart...)
	for n := 0; n < mutations; n++ {
		s := []byte(src[rng.IntN(len(src))])
		for k := 0; k < 1+rng.IntN(3); k++ {
			if len(s) == 0 {
				break
			}
			i := rng.IntN(len(s) + 1)
			switch rng.IntN(3) {
			case 0:
				s = append(s[:i:i], append([]byte(alpha[rng.IntN(len(alpha))]), s[i:]...)...)
			case 1:
				if i < len(s) {
					s = append(s[:i:i], s[i+1:]...)
				}
			default:
				if i < len(s) {
					s = append(s[:i:i], append([]byte(alpha[rng.IntN(len(alpha))]), s[i+1:]...)...)
				}
			}
		}
		tools := []string{"", "read", "write", "grep"}
		add(tools[rng.IntN(len(tools))], string(s))
	}
}
