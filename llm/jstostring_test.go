package llm

import (
	"testing"

	"github.com/valyala/fastjson"
)

// TestAppendJSToString: String(JSON.parse(text)) as Node 24 prints it.
func TestAppendJSToString(t *testing.T) {
	for text, want := range map[string]string{
		`"a\nb"`:                "a\nb",
		`"😀"`:                   "😀",
		`1.5`:                   "1.5",
		`1e2`:                   "100",
		`100.0`:                 "100",
		`1e400`:                 "Infinity",
		`-1e400`:                "-Infinity",
		`12345678901234567890`:  "12345678901234567000",
		`1e21`:                  "1e+21",
		`0.000001`:              "0.000001",
		`1e-7`:                  "1e-7",
		`true`:                  "true",
		`false`:                 "false",
		`null`:                  "null",
		`{"a":1}`:               "[object Object]",
		`[]`:                    "",
		`[1,2]`:                 "1,2",
		`[null,"x",[3,[4]],{}]`: ",x,3,4,[object Object]",
		`[[],[[]]]`:             ",",
	} {
		if got := string(AppendJSToString(nil, fastjson.MustParse(text))); got != want {
			t.Errorf("String(%s) = %q, want %q", text, got, want)
		}
	}
}
