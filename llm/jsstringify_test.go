package llm

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/valyala/fastjson"
)

// TestAppendJSStringifyMatchesNode checks AppendJSStringify against what
// Node's JSON.stringify(JSON.parse(text)) gave for 2,000 random JSON texts
// (testdata/jsstringify/gen.mjs).
func TestAppendJSStringifyMatchesNode(t *testing.T) {
	f, err := os.Open("testdata/jsstringify/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c struct{ Text, Out string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		v, err := fastjson.Parse(c.Text)
		if err != nil {
			t.Fatalf("%s: %v", c.Text, err)
		}
		if got := string(AppendJSStringify(nil, v)); got != c.Out {
			t.Fatalf("%s:\n got %s\nNode %s", c.Text, got, c.Out)
		}
		n++
	}
	if n != 2000 {
		t.Fatalf("%d cases, want 2000", n)
	}
}
